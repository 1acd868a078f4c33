package redisstore

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/social"
)

var _ auth.SessionStore = (*Store)(nil)

// CreateSession stores a new refresh-token family (idempotent HSET).
func (s *Store) CreateSession(ctx context.Context, family, userID, tokenHash string, ttl time.Duration) error {
	key := s.keys.Session(family)
	_, err := s.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.HSet(ctx, key, "uid", userID, "cur", tokenHash)
		p.PExpire(ctx, key, ttl)
		return nil
	})
	if err != nil {
		return fmt.Errorf("store session: %w", err)
	}
	return nil
}

// rotateScript swaps the family's current token hash. A token that is not
// the current one is reuse of a rotated token: the family is deleted. The
// one exception is this same rotation retried by go-redis after a lost
// reply (prev = old and cur = new), which answers OK again.
var rotateScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], 'cur')
if not cur then return 'GONE' end
local uid = redis.call('HGET', KEYS[1], 'uid')
if cur == ARGV[1] then
  redis.call('HSET', KEYS[1], 'cur', ARGV[2], 'prev', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 'OK:' .. uid
end
if cur == ARGV[2] and redis.call('HGET', KEYS[1], 'prev') == ARGV[1] then
  return 'OK:' .. uid
end
redis.call('DEL', KEYS[1])
return 'REUSED'
`)

// RotateSession implements auth.SessionStore.
func (s *Store) RotateSession(ctx context.Context, family, oldHash, newHash string, ttl time.Duration) (string, error) {
	res, err := rotateScript.Run(ctx, s.rdb, []string{s.keys.Session(family)}, oldHash, newHash, ttl.Milliseconds()).Text()
	if err != nil {
		return "", fmt.Errorf("rotate session: %w", err)
	}
	uid, ok := strings.CutPrefix(res, "OK:")
	if !ok {
		return "", social.Errorf(social.Unauthenticated, "invalid or expired refresh token")
	}
	return uid, nil
}

// RevokeSession deletes a refresh-token family.
func (s *Store) RevokeSession(ctx context.Context, family string) error {
	return s.rdb.Del(ctx, s.keys.Session(family)).Err()
}

// DenyToken denies an access token id until it would have expired anyway.
func (s *Store) DenyToken(ctx context.Context, jti string, until time.Time) error {
	ttl := time.Until(until)
	if ttl <= 0 {
		return nil
	}
	return s.rdb.Set(ctx, s.keys.Denied(jti), "1", ttl).Err()
}

// Revoked implements auth.SessionStore with one pipelined round trip.
func (s *Store) Revoked(ctx context.Context, jti, family string) (bool, error) {
	var denied, live *redis.IntCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		denied = p.Exists(ctx, s.keys.Denied(jti))
		if family != "" {
			live = p.Exists(ctx, s.keys.Session(family))
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	if denied.Val() > 0 {
		return true, nil
	}
	return live != nil && live.Val() == 0, nil
}
