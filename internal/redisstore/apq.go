package redisstore

import (
	"context"
	"log/slog"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// APQConfig bounds the persisted-query cache.
type APQConfig struct {
	// TTL is how long an entry lives after it was last added.
	TTL time.Duration
	// MaxEntries caps the number of entries; the oldest go first.
	MaxEntries int
	// MaxQueryBytes is the longest document cached; longer ones are
	// executed but not cached (the client sends them in full again).
	MaxQueryBytes int
}

// DefaultAPQ is the persisted-query cache of the gateway's defaults: at
// most 10000 documents of at most 16 KiB (160 MiB in the worst case), each
// kept a day.
func DefaultAPQ() APQConfig {
	return APQConfig{TTL: 24 * time.Hour, MaxEntries: 10000, MaxQueryBytes: 16 << 10}
}

// APQCache is gqlgen's automatic-persisted-query cache in Redis, shared by
// every gateway instance. A Redis failure reads as a miss (the client then
// sends the whole document) and is logged.
type APQCache struct {
	s   *DB
	cfg APQConfig
	log *slog.Logger
}

var _ graphql.Cache[string] = (*APQCache)(nil)

// APQCache returns the store's persisted-query cache.
func (s *DB) APQCache(cfg APQConfig, log *slog.Logger) *APQCache {
	if log == nil {
		log = slog.Default()
	}
	return &APQCache{s: s, cfg: cfg, log: log}
}

// Get implements graphql.Cache.
func (c *APQCache) Get(ctx context.Context, hash string) (string, bool) {
	if len(hash) != 64 {
		return "", false // not a SHA-256: no key is built from it
	}
	q, err := c.s.rdb.Get(ctx, c.s.keys.APQ(hash)).Result()
	if err != nil {
		if !isNil(err) {
			c.log.WarnContext(ctx, "persisted query cache read failed", "err", err)
		}
		return "", false
	}
	return q, true
}

// Add implements graphql.Cache. gqlgen calls it only after checking that
// the hash is the document's.
func (c *APQCache) Add(ctx context.Context, hash, query string) {
	if len(hash) != 64 || len(query) > c.cfg.MaxQueryBytes || c.cfg.MaxEntries < 1 || c.cfg.TTL <= 0 {
		return
	}
	err := apqAddScript.Run(ctx, c.s.rdb, []string{c.s.keys.APQIndex(), c.s.keys.APQ(hash)},
		hash, query, c.cfg.TTL.Milliseconds(), c.cfg.MaxEntries, c.s.keys.APQ("")).Err()
	if err != nil {
		c.log.WarnContext(ctx, "persisted query cache write failed", "err", err)
	}
}
