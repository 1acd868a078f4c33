package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/socialgw/gateway/internal/social"
)

// IdempotencyConfig bounds the idempotency keys of mutations.
type IdempotencyConfig struct {
	// TTL is how long a key's answer is kept after its execution ended.
	TTL time.Duration
	// Pending is how long a key stays claimed by an execution that has
	// not ended (a gateway that died mid-execution): past it a retry runs.
	// It must exceed the request timeout.
	Pending time.Duration
	// MaxKeys caps one user's live keys; a new key past it evicts the
	// user's oldest.
	MaxKeys int
}

// DefaultIdempotency keeps answers 24 hours, at most 1000 keys a user.
func DefaultIdempotency() IdempotencyConfig {
	return IdempotencyConfig{TTL: 24 * time.Hour, Pending: time.Minute, MaxKeys: 1000}
}

// IdempotencyStore keeps mutations' idempotency keys: each user's keys,
// with the hash of the request that first used each and its answer, in
// Redis, shared by every gateway.
type IdempotencyStore struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
	cfg  IdempotencyConfig
}

// Idempotency returns the store's idempotency keys with cfg's bounds.
func (s *DB) Idempotency(cfg IdempotencyConfig) *IdempotencyStore {
	return &IdempotencyStore{rdb: s.rdb, keys: s.keys, set: s.set, cfg: cfg}
}

// Claim claims key for user's request whose hash is hash, or reports
// what the key already holds.
func (s *IdempotencyStore) Claim(ctx context.Context, user, key, hash string) (social.KeyClaim, error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	res, err := idemClaimScript.Run(ctx, s.rdb, []string{s.keys.IdemRecord(user, key), s.keys.IdemIndex(user)},
		s.set.now().UnixMilli(), hash, token, s.cfg.Pending.Milliseconds(), s.cfg.TTL.Milliseconds(), s.cfg.MaxKeys,
		key, s.keys.IdemRecord(user, "")).StringSlice()
	if err != nil || len(res) == 0 {
		return social.KeyClaim{}, fmt.Errorf("claim idempotency key: %w", err)
	}
	switch res[0] {
	case "claimed":
		return social.KeyClaim{State: social.Claimed, Token: token}, nil
	case "done":
		return social.KeyClaim{State: social.Done, Answer: []byte(res[1])}, nil
	case "pending":
		ms, _ := strconv.ParseInt(res[1], 10, 64)
		return social.KeyClaim{State: social.Pending, Left: time.Duration(ms) * time.Millisecond}, nil
	default:
		return social.KeyClaim{State: social.Mismatch}, nil
	}
}

// Save stores the answer of a claimed key's execution; a repeat of the
// key within the TTL gets it. A claim that is no longer c's (it expired
// and a retry claimed it) is left alone.
func (s *IdempotencyStore) Save(ctx context.Context, user, key string, c social.KeyClaim, answer []byte) error {
	return s.settle(ctx, user, key, c, answer)
}

// Release gives a claimed key up, so that a retry runs.
func (s *IdempotencyStore) Release(ctx context.Context, user, key string, c social.KeyClaim) error {
	return s.settle(ctx, user, key, c, nil)
}

func (s *IdempotencyStore) settle(ctx context.Context, user, key string, c social.KeyClaim, answer []byte) error {
	args := []any{s.set.now().UnixMilli(), c.Token, s.cfg.TTL.Milliseconds(), key}
	if answer != nil {
		args = append(args, answer)
	}
	err := idemSettleScript.Run(ctx, s.rdb, []string{s.keys.IdemRecord(user, key), s.keys.IdemIndex(user)}, args...).Err()
	if err != nil {
		return fmt.Errorf("settle idempotency key: %w", err)
	}
	return nil
}
