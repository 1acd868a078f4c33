package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// AccountService keeps accounts and profiles: registration, credentials,
// users by id and by name, bios (social.AccountStore, graph.Profiles).
type AccountService struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
}

var _ social.AccountStore = (*AccountService)(nil)

// Registration runs as single-slot steps, so it works the same on one
// Redis and on Redis Cluster (docs/data-model.md, "Cross-slot steps"):
//
//  0. a read of the name and e-mail indexes refuses a taken one before an
//     id is spent.
//  1. INCR the user id ({acct}); a retry only leaves a gap.
//  2. registerScript ({acct}): claim name and e-mail for the id and record
//     the registration as pending. Nothing is visible yet: the id is known
//     to no one, and a login by the name finds no profile.
//  3. registerProfileScript ({u<id>}): write the profile; from here the
//     account exists.
//  4. registerSettleScript ({acct}): drop the pending entry.
//
// A crash after 2 leaves claims without a profile: the name and address
// read as taken (CONFLICT) for regGrace, after which the next registration
// that wants either settles the abandoned one (settleAbandoned) and
// proceeds. A crash after 3 leaves a complete account and a pending entry,
// which the same repair removes without touching the claims.
const (
	// regGrace is how long a pending registration is left alone: far longer
	// than the steps take, so only an abandoned one is settled.
	regGrace = 30 * time.Second
	// regVoidTTL bounds a void marker; a stalled registration cannot
	// resume after it (request deadlines end it long before).
	regVoidTTL = 24 * time.Hour
)

// CreateUser registers an account; a taken name or e-mail is CONFLICT.
func (s *AccountService) CreateUser(ctx context.Context, in social.NewAccount) (*social.User, error) {
	// A taken name or address is refused before an id is spent, so a
	// refused registration changes nothing; registerScript still decides
	// races between two registrations of one name. While any registration
	// is pending the claim decides instead: the name may be held by an
	// abandoned one that claim settles.
	var nameTaken, emailTaken *redis.BoolCmd
	var pending *redis.IntCmd
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		nameTaken = p.HExists(ctx, s.keys.Names(), strings.ToLower(in.Name))
		emailTaken = p.HExists(ctx, s.keys.Emails(), strings.ToLower(in.Email))
		pending = p.HLen(ctx, s.keys.RegPending())
		return nil
	}); err != nil {
		return nil, fmt.Errorf("check name and e-mail: %w", err)
	}
	if nameTaken.Val() && pending.Val() == 0 {
		return nil, social.Errorf(social.Conflict, "the name %q is taken", in.Name)
	}
	if emailTaken.Val() && pending.Val() == 0 {
		return nil, social.Errorf(social.Conflict, "the e-mail address is already registered")
	}
	n, err := s.rdb.Incr(ctx, s.keys.UserSeq()).Result()
	if err != nil {
		return nil, fmt.Errorf("allocate user id: %w", err)
	}
	id := strconv.FormatInt(n, 10)
	created := s.set.now().UTC()
	if err := s.claim(ctx, in, id, created); err != nil {
		return nil, err
	}
	// Before the profile, so a complete account is always found (search.go).
	if err := (&UserSearchService{rdb: s.rdb, keys: s.keys}).IndexUser(ctx, id, in.Name, ""); err != nil {
		return nil, fmt.Errorf("register %q: %w", in.Name, err)
	}
	profile := userRow{user: social.User{Name: in.Name, Email: in.Email, CreatedAt: created}, pw: in.PasswordHash}
	res, err := registerProfileScript.Run(ctx, s.rdb, []string{s.keys.User(id), s.keys.UserVoid(id), s.keys.HomeMark(id)},
		append([]any{created.UnixMilli(), s.set.feed.homeTTL()}, profileRecord.encode(&profile)...)...,
	).Text()
	if err != nil {
		return nil, fmt.Errorf("register %q: write profile: %w", in.Name, err)
	}
	if res == "VOID" {
		// This registration stalled past regGrace and another settled it.
		return nil, fmt.Errorf("register %q: abandoned while it stalled; try again", in.Name)
	}
	if err := s.settleRegistration(ctx, id, "DONE"); err != nil {
		return nil, fmt.Errorf("register %q: %w", in.Name, err)
	}
	return &social.User{ID: id, Name: in.Name, Email: in.Email, CreatedAt: created.Truncate(1e6)}, nil
}

// claim claims in's name and e-mail for id, settling at most a few
// abandoned registrations that hold them.
func (s *AccountService) claim(ctx context.Context, in social.NewAccount, id string, now time.Time) error {
	for try := 0; ; try++ {
		res, err := registerScript.Run(ctx, s.rdb,
			[]string{s.keys.Names(), s.keys.Emails(), s.keys.RegPending()},
			strings.ToLower(in.Name), strings.ToLower(in.Email), id, now.UnixMilli(), regGrace.Milliseconds(),
		).StringSlice()
		if err != nil {
			return fmt.Errorf("register %q: claim: %w", in.Name, err)
		}
		switch res[0] {
		case "OK":
			return nil
		case "NAME":
			return social.Errorf(social.Conflict, "the name %q is taken", in.Name)
		case "EMAIL":
			return social.Errorf(social.Conflict, "the e-mail address is already registered")
		case "STALE":
			// The name and the address each have one owner: two repairs
			// free both.
			if try == 2 {
				return fmt.Errorf("register %q: claims still held after repair", in.Name)
			}
			if err := s.settleAbandoned(ctx, res[1]); err != nil {
				return fmt.Errorf("register %q: %w", in.Name, err)
			}
		default:
			return fmt.Errorf("register %q: unexpected reply %q", in.Name, res[0])
		}
	}
}

// settleAbandoned finishes (profile written) or rolls back (profile never
// written; the id is voided first, so it never will be) the registration
// of id left pending by a process that died or stalled.
func (s *AccountService) settleAbandoned(ctx context.Context, id string) error {
	fate, err := registerAbandonScript.Run(ctx, s.rdb, []string{s.keys.User(id), s.keys.UserVoid(id)},
		regVoidTTL.Milliseconds()).Text()
	s.set.profiles.Invalidate(s.keys.User(id))
	if err != nil {
		return fmt.Errorf("settle abandoned registration %s: %w", id, err)
	}
	return s.settleRegistration(ctx, id, fate)
}

// settleRegistration removes id's pending entry and, for a VOID fate, the
// claims it holds.
func (s *AccountService) settleRegistration(ctx context.Context, id, fate string) error {
	err := registerSettleScript.Run(ctx, s.rdb, []string{s.keys.Names(), s.keys.Emails(), s.keys.RegPending()}, id, fate).Err()
	if err != nil {
		return fmt.Errorf("settle registration %s: %w", id, err)
	}
	return nil
}

// Credentials returns the user id and password hash for a name or e-mail
// address (case-insensitive), or NOT_FOUND.
func (s *AccountService) Credentials(ctx context.Context, login string) (string, string, error) {
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
	pw, err := s.rdb.HGet(ctx, s.keys.User(id), profileRecord.name("pw")).Result()
	if isNil(err) {
		return "", "", social.Errorf(social.NotFound, "no such account")
	}
	if err != nil {
		return "", "", fmt.Errorf("load credentials of %s: %w", id, err)
	}
	return id, pw, nil
}

// User returns one user, a suspended one too (Suspended says so), or
// NOT_FOUND.
func (s *AccountService) User(ctx context.Context, id string) (*social.User, error) {
	us, err := s.users(ctx, []string{id}, userRead.stored)
	if err != nil {
		return nil, err
	}
	if us[0] == nil {
		return nil, social.Errorf(social.NotFound, "user %s not found", id)
	}
	return us[0], nil
}

// Users loads users with one pipeline; missing and suspended users are nil
// entries.
func (s *AccountService) Users(ctx context.Context, ids []string) ([]*social.User, error) {
	return s.users(ctx, ids, userRead.user)
}

// users loads users with one pipeline, each as get reads it.
func (s *AccountService) users(ctx context.Context, ids []string, get func(userRead) *social.User) ([]*social.User, error) {
	reads := make([]userRead, len(ids))
	queued := 0
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			reads[i] = queueUser(ctx, p, s.keys, s.set.profiles, id)
			if reads[i].queued() {
				queued++
			}
		}
		return nil
	})
	out := make([]*social.User, len(ids))
	for i, r := range reads {
		out[i] = get(r)
	}
	if err != nil && queued > 0 {
		return nil, fmt.Errorf("load %d users: %w", len(ids), err)
	}
	return out, nil
}

// UserIDByName resolves a user name (case-insensitive), or NOT_FOUND.
func (s *AccountService) UserIDByName(ctx context.Context, name string) (string, error) {
	id, err := s.rdb.HGet(ctx, s.keys.Names(), strings.ToLower(name)).Result()
	if isNil(err) {
		return "", social.Errorf(social.NotFound, "user %q not found", name)
	}
	if err != nil {
		return "", fmt.Errorf("look up name %q: %w", name, err)
	}
	return id, nil
}

// userIDsByName resolves lower-cased user names: "" for an unknown one.
func userIDsByName(ctx context.Context, rdb redis.UniversalClient, k Keys, names []string) ([]string, error) {
	vals, err := rdb.HMGet(ctx, k.Names(), names...).Result()
	if err != nil {
		return nil, fmt.Errorf("look up %d names: %w", len(names), err)
	}
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i], _ = v.(string)
	}
	return out, nil
}

// UpdateBio sets a user's bio, trimmed and checked (social.ValidateBio),
// with an idempotent HSET on an existing user.
func (s *AccountService) UpdateBio(ctx context.Context, id, bio string) error {
	bio, err := social.ValidateBio(bio)
	if err != nil {
		return err
	}
	// HSET would create a hash for a deleted user: check existence inside
	// the same atomic step.
	row := userRow{user: social.User{Bio: bio}}
	n, err := updateIfExistsScript.Run(ctx, s.rdb, []string{s.keys.User(id)}, profileRecord.encodeOnly(&row, profileRecord.strs("bio"))...).Int()
	// Its author sees the edit at once; other gateways when Redis's
	// invalidation reaches them.
	s.set.profiles.Invalidate(s.keys.User(id))
	if err != nil {
		return fmt.Errorf("update bio of %s: %w", id, err)
	}
	if n == 0 {
		return social.Errorf(social.NotFound, "user %s not found", id)
	}
	return nil
}
