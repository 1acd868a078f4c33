// Package redisstore is the Redis adapter of the gateway: one service type
// per consumer interface (accounts, sessions, the social graph, posts,
// engagement, timelines, live timelines, fan-out, notifications) over one
// shared DB, on go-redis.
//
// Writes are made safe against go-redis's automatic retry of a command whose
// reply was slow: each one is either naturally idempotent (HSET, ZADD of a
// fixed score, SADD, DEL) or a Lua script that recognises its own earlier
// run. docs/data-model.md explains the approach key by key.
package redisstore

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/rcache"
	"github.com/socialgw/gateway/internal/social"
)

// DB is the connection the services share: one Redis client, the key
// builder, and the settings (settings). It holds no logic of a service:
// its methods are the store-wide operations of the processes that wire it
// (the settings' setters, script loading, the checks of /readyz, the
// migrations), as wtf's sqlite.DB is the connection its services share.
type DB struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
}

// settings are what several services read besides the client and the
// keys: the clock and what the processes set once before the store
// serves (SetFeed, CacheProfiles, CachePosts, UseClassicPubSub,
// SetFiles). Every service holds the one value by pointer, so a setter
// called after New reaches them all.
type settings struct {
	now  func() time.Time
	feed FeedConfig // timelines and fan-out (config.go)
	// publishCmd announces live posts: "" (SPUBLISH) or "PUBLISH" (live.go).
	publishCmd string
	// files are the media files' blob store (media.go); nil: none.
	files Files
	// profileFiles deletes a user's profile pictures (the purge of an
	// account): files, when its store can; nil: none.
	profileFiles ProfileFiles
	// profiles caches users' profile hashes (profilecache.go); nil: off.
	profiles *rcache.Cache[social.User]
	// posts caches the fixed fields of post hashes (postcache.go); nil: off.
	posts *rcache.Cache[[]any]
	// newerRound, when set (tests), runs after each read round of a newer
	// page (timeline_newer.go).
	newerRound func()
	// purgeBatch, when set (tests), runs after each batch of an account's
	// purge with the stage's name (fanout_purge.go).
	purgeBatch func(stage string)
	// purgeSlice, when not 0 (tests), replaces purgeSlice.
	purgeSlice time.Duration
}

// Open returns the shared value over rdb whose keys start with prefix,
// with the default settings.
func Open(rdb redis.UniversalClient, prefix string) *DB {
	return &DB{rdb: rdb, keys: NewKeys(prefix), set: &settings{now: time.Now, feed: DefaultFeed()}}
}

// Store bundles every service over one DB, for the tools and tests that
// use them all (the seed, the demo, the benchmark); the composition root
// hands each consumer the one service it needs instead.
type Store struct {
	*DB
	*AccountService
	*SessionService
	*GraphService
	*PostService
	*EngagementService
	*TimelineService
	*LiveService
	*FanoutService
	*NotificationService
	*EditService
	*ReplyService
	*CurationService
	*FilterService
	*TagService
	*TrendService
	*UserSearchService
	*ModerationService
}

// New returns every service over one DB on rdb whose keys start with
// prefix.
func New(rdb redis.UniversalClient, prefix string) *Store {
	db := Open(rdb, prefix)
	c, k, set := db.rdb, db.keys, db.set
	posts := &PostService{rdb: c, keys: k, set: set}
	eng := &EngagementService{rdb: c, keys: k, set: set}
	st := &Store{DB: db,
		AccountService:      &AccountService{rdb: c, keys: k, set: set},
		SessionService:      &SessionService{rdb: c, keys: k},
		GraphService:        &GraphService{rdb: c, keys: k, set: set},
		PostService:         posts,
		EngagementService:   eng,
		TimelineService:     &TimelineService{rdb: c, keys: k, set: set},
		LiveService:         &LiveService{rdb: c, keys: k, set: set},
		FanoutService:       &FanoutService{rdb: c, keys: k, set: set, posts: posts},
		NotificationService: &NotificationService{rdb: c, keys: k, set: set},
		EditService:         &EditService{rdb: c, keys: k, set: set},
		ReplyService:        &ReplyService{rdb: c, keys: k, set: set, eng: eng},
	}
	st.CurationService = NewCurationService(st.TimelineService)
	st.FilterService = NewFilterService(db)
	st.TagService = NewTagService(st.TimelineService)
	st.TrendService = NewTrendService(db, DefaultTrends())
	st.UserSearchService = NewUserSearchService(db)
	st.ModerationService = NewModerationService(db, eng)
	return st
}

// isCluster reports whether rdb is a Redis Cluster client, where a step
// that reads two slots must be split.
func isCluster(rdb redis.UniversalClient) bool {
	_, ok := rdb.(*redis.ClusterClient)
	return ok
}

// Client returns the underlying go-redis client.
func (s *DB) Client() redis.UniversalClient { return s.rdb }

// Keys returns the key builder of the store.
func (s *DB) Keys() Keys { return s.keys }

// Ping reports whether Redis answers; /readyz uses it.
func (s *DB) Ping(ctx context.Context) error { return s.rdb.Ping(ctx).Err() }

// DBSize counts the keys of the database, on every master of a cluster.
func (s *DB) DBSize(ctx context.Context) (int64, error) {
	var n atomic.Int64
	err := EachServer(ctx, s.rdb, func(ctx context.Context, c redis.UniversalClient) error {
		k, err := c.DBSize(ctx).Result()
		n.Add(k)
		return err
	})
	return n.Load(), err
}
