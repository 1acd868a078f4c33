package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/social"
)

var _ auth.AccountStore = (*Store)(nil)

// userFields are the hash fields read for a profile, in this order.
var userFields = []string{"name", "email", "bio", "created"}

// CreateUser registers an account; a taken name or e-mail is CONFLICT.
func (s *Store) CreateUser(ctx context.Context, in auth.NewAccount) (*social.User, error) {
	// A taken name or address is refused before an id is spent, so a
	// refused registration changes nothing; registerScript still decides
	// races between two registrations of one name.
	var nameTaken, emailTaken *redis.BoolCmd
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		nameTaken = p.HExists(ctx, s.keys.Names(), strings.ToLower(in.Name))
		emailTaken = p.HExists(ctx, s.keys.Emails(), strings.ToLower(in.Email))
		return nil
	}); err != nil {
		return nil, fmt.Errorf("check name and e-mail: %w", err)
	}
	if nameTaken.Val() {
		return nil, social.Errorf(social.Conflict, "the name %q is taken", in.Name)
	}
	if emailTaken.Val() {
		return nil, social.Errorf(social.Conflict, "the e-mail address is already registered")
	}
	// A retried INCR only leaves a gap in the ids.
	n, err := s.rdb.Incr(ctx, s.keys.UserSeq()).Result()
	if err != nil {
		return nil, fmt.Errorf("allocate user id: %w", err)
	}
	id := strconv.FormatInt(n, 10)
	created := s.now().UTC()
	res, err := registerScript.Run(ctx, s.rdb,
		[]string{s.keys.Names(), s.keys.Emails(), s.keys.User(id)},
		strings.ToLower(in.Name), strings.ToLower(in.Email), id,
		"name", in.Name, "email", in.Email, "bio", "", "created", msString(created), "pw", in.PasswordHash,
	).Text()
	if err != nil {
		return nil, fmt.Errorf("register %q: %w", in.Name, err)
	}
	switch res {
	case "NAME":
		return nil, social.Errorf(social.Conflict, "the name %q is taken", in.Name)
	case "EMAIL":
		return nil, social.Errorf(social.Conflict, "the e-mail address is already registered")
	}
	return &social.User{ID: id, Name: in.Name, Email: in.Email, CreatedAt: created.Truncate(1e6)}, nil
}

// Credentials returns the user id and password hash for a name or e-mail
// address (case-insensitive), or NOT_FOUND.
func (s *Store) Credentials(ctx context.Context, login string) (string, string, error) {
	index := s.keys.Names()
	if strings.Contains(login, "@") {
		index = s.keys.Emails()
	}
	id, err := s.rdb.HGet(ctx, index, strings.ToLower(login)).Result()
	if isNil(err) {
		return "", "", social.Errorf(social.NotFound, "no such account")
	}
	if err != nil {
		return "", "", fmt.Errorf("look up login: %w", err)
	}
	pw, err := s.rdb.HGet(ctx, s.keys.User(id), "pw").Result()
	if isNil(err) {
		return "", "", social.Errorf(social.NotFound, "no such account")
	}
	if err != nil {
		return "", "", fmt.Errorf("load credentials of %s: %w", id, err)
	}
	return id, pw, nil
}

// User returns one user, or NOT_FOUND.
func (s *Store) User(ctx context.Context, id string) (*social.User, error) {
	us, err := s.Users(ctx, []string{id})
	if err != nil {
		return nil, err
	}
	if us[0] == nil {
		return nil, social.Errorf(social.NotFound, "user %s not found", id)
	}
	return us[0], nil
}

// Users loads users with one pipeline; missing users are nil entries.
func (s *Store) Users(ctx context.Context, ids []string) ([]*social.User, error) {
	cmds := make([]*redis.SliceCmd, len(ids))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = s.queueUser(ctx, p, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load %d users: %w", len(ids), err)
	}
	out := make([]*social.User, len(ids))
	for i, c := range cmds {
		out[i] = userFromValues(ids[i], c.Val())
	}
	return out, nil
}

// queueUser queues the profile read of one user.
func (s *Store) queueUser(ctx context.Context, p redis.Pipeliner, id string) *redis.SliceCmd {
	return p.HMGet(ctx, s.keys.User(id), userFields...)
}

// userFromValues builds a user from an HMGET of userFields; nil when the
// hash does not exist.
func userFromValues(id string, v []any) *social.User {
	name, _ := v[0].(string)
	if name == "" {
		return nil
	}
	email, _ := v[1].(string)
	bio, _ := v[2].(string)
	created, _ := v[3].(string)
	return &social.User{ID: id, Name: name, Email: email, Bio: bio, CreatedAt: msTime(created)}
}

// UserIDByName resolves a user name (case-insensitive), or NOT_FOUND.
func (s *Store) UserIDByName(ctx context.Context, name string) (string, error) {
	id, err := s.rdb.HGet(ctx, s.keys.Names(), strings.ToLower(name)).Result()
	if isNil(err) {
		return "", social.Errorf(social.NotFound, "user %q not found", name)
	}
	if err != nil {
		return "", fmt.Errorf("look up name %q: %w", name, err)
	}
	return id, nil
}

// UpdateBio sets a user's bio (idempotent HSET on an existing user).
func (s *Store) UpdateBio(ctx context.Context, id, bio string) error {
	// HSET would create a hash for a deleted user: check existence inside
	// the same atomic step.
	n, err := updateIfExistsScript.Run(ctx, s.rdb, []string{s.keys.User(id)}, "bio", bio).Int()
	if err != nil {
		return fmt.Errorf("update bio of %s: %w", id, err)
	}
	if n == 0 {
		return social.Errorf(social.NotFound, "user %s not found", id)
	}
	return nil
}
