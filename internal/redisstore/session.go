package redisstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// SessionService keeps refresh-token families and the access-token
// denylist (social.SessionStore, live.Sessions).
type SessionService struct {
	rdb  redis.UniversalClient
	keys Keys
}

var _ social.SessionStore = (*SessionService)(nil)

// CreateSession stores a new refresh-token family (idempotent HSET): its
// user, the hash of its current token and the key its successors are
// derived with.
func (s *SessionService) CreateSession(ctx context.Context, family, userID, tokenHash, key string, ttl time.Duration) error {
	k := s.keys.Session(family)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, k, "uid", userID, "cur", tokenHash, "key", key)
		p.PExpire(ctx, k, ttl)
		return nil
	})
	if err != nil {
		return fmt.Errorf("store session: %w", err)
	}
	return s.trackSession(ctx, userID, family)
}

// SessionKey implements social.SessionStore: "" for a family created before
// successor keys existed, NOT_FOUND for one that is gone.
func (s *SessionService) SessionKey(ctx context.Context, family string) (string, error) {
	v, err := s.rdb.HMGet(ctx, s.keys.Session(family), "uid", "key").Result()
	if err != nil {
		return "", fmt.Errorf("load session key: %w", err)
	}
	if v[0] == nil {
		return "", errSessionGone
	}
	key, _ := v[1].(string)
	return key, nil
}

var (
	errSessionGone = social.Errorf(social.Unauthenticated, "invalid or expired refresh token")
)

// A family remembers the tokens it rotated away from, so that only a
// token it really issued counts as reused: the last sessionGenerations of
// them, each as the first sessionGenerationDigits hex digits of its
// SHA-256 (64 bits: a forged secret matches one by chance with odds of
// 64 in 2^64). At most 1 KiB per session.
const (
	sessionGenerations      = 64
	sessionGenerationDigits = 16
)

// RotateSession implements social.SessionStore. A secret the family never
// issued is refused as a gone session would be, and changes nothing.
func (s *SessionService) RotateSession(ctx context.Context, family, oldHash, newHash string, grace, ttl time.Duration) (string, error) {
	res, err := rotateScript.Run(ctx, s.rdb, []string{s.keys.Session(family)},
		oldHash, newHash, ttl.Milliseconds(), grace.Milliseconds(),
		sessionGenerations, sessionGenerationDigits).Text()
	if err != nil {
		return "", fmt.Errorf("rotate session: %w", err)
	}
	if uid, ok := strings.CutPrefix(res, "OK:"); ok {
		return uid, nil
	}
	if res == "REUSED" {
		return "", social.ErrRefreshReused
	}
	return "", errSessionGone
}

// RevokeSession deletes a refresh-token family.
func (s *SessionService) RevokeSession(ctx context.Context, family string) error {
	return s.rdb.Del(ctx, s.keys.Session(family)).Err()
}

// DenyToken denies an access token id until it would have expired anyway.
func (s *SessionService) DenyToken(ctx context.Context, jti string, until time.Time) error {
	ttl := time.Until(until)
	if ttl <= 0 {
		return nil
	}
	return s.rdb.Set(ctx, s.keys.Denied(jti), "1", ttl).Err()
}

// Revoked implements social.SessionStore with one pipelined round trip: the
// token is denied, its family is gone, or its user no longer exists or is
// suspended.
func (s *SessionService) Revoked(ctx context.Context, jti, family, userID string) (bool, error) {
	var denied, live *redis.IntCmd
	var user *redis.SliceCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		denied = p.Exists(ctx, s.keys.Denied(jti))
		// One read tells both: the profile exists (a deleted account's is
		// renamed away) and is not suspended.
		user = p.HMGet(ctx, s.keys.User(userID), profileRecord.name("name"), profileRecord.name("susp"))
		if family != "" {
			live = p.Exists(ctx, s.keys.Session(family))
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	u := user.Val()
	if denied.Val() > 0 || len(u) != 2 || u[0] == nil || u[1] != nil {
		return true, nil
	}
	return live != nil && live.Val() == 0, nil
}
