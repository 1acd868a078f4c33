package rcache_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/rcache"
	"github.com/socialgw/gateway/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// tracked returns a cache kept fresh by tracking prefix on rdb, once its
// tracking is up.
func tracked(t *testing.T, rdb redis.UniversalClient, prefix string) *rcache.Cache[string] {
	t.Helper()
	c := rcache.New[string](100, time.Hour)
	tr := rcache.StartTracker(rdb, c, rcache.TrackerConfig{Prefixes: []string{prefix}, Log: redistest.Logger(t)})
	t.Cleanup(tr.Close)
	redistest.Eventually(t, 10*time.Second, "tracking up", c.Live)
	return c
}

// fill reads key from Redis into c the way the store does.
func fill(t *testing.T, rdb redis.UniversalClient, c *rcache.Cache[string], key string) string {
	t.Helper()
	tk := c.Begin(key)
	v, err := rdb.Get(context.Background(), key).Result()
	if err != nil {
		t.Fatal(err)
	}
	c.Finish(tk, v, true)
	return v
}

// TestTrackerDropsReplyOlderThanInvalidation: a reply read before a
// write, handled after that write's invalidation arrived, is not kept; a
// read begun after it is.
func TestTrackerDropsReplyOlderThanInvalidation(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t)
	prefix := redistest.Prefix(t) + "c:"
	c := tracked(t, rdb, prefix)
	key := prefix + "k"
	announced := func(what string, after int64) {
		redistest.Eventually(t, 10*time.Second, what, func() bool { return c.Stats().Invalidations > after })
	}
	before := c.Stats().Invalidations
	rdb.Set(ctx, key, "old", 0)
	announced("the first write's invalidation", before)

	tk := c.Begin(key)
	old := rdb.Get(ctx, key).Val()
	before = c.Stats().Invalidations
	rdb.Set(ctx, key, "new", 0)
	announced("the write's invalidation", before)
	c.Finish(tk, old, true)
	if v, ok := c.Get(key); ok {
		t.Fatalf("the cache kept %q, read before a write it was told about", v)
	}
	if v := fill(t, rdb, c, key); v != "new" {
		t.Fatalf("read %q", v)
	}
	if v, ok := c.Get(key); !ok || v != "new" {
		t.Fatalf("Get = %q, %v; want the read begun after the write", v, ok)
	}
}

// TestTrackerInvalidatesOnEveryServer writes a key on each server (each
// master of a cluster) and sees each announced; a key outside the prefix
// is not.
func TestTrackerInvalidatesOnEveryServer(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t)
	prefix := redistest.Prefix(t) + "c:"
	c := tracked(t, rdb, prefix)
	keys := keysOnEveryServer(t, rdb, prefix)
	for _, k := range keys {
		// Wait for the write's own announcement before filling: one
		// still in flight would land in the count below.
		before := c.Stats().Invalidations
		rdb.Set(ctx, k, "v1", 0)
		redistest.Eventually(t, 10*time.Second, "the announcement of "+k, func() bool {
			return c.Stats().Invalidations > before
		})
		redistest.Eventually(t, 10*time.Second, "a kept read of "+k, func() bool {
			fill(t, rdb, c, k)
			_, ok := c.Get(k)
			return ok
		})
	}
	for _, k := range keys {
		// A key of the same slot outside the prefix, then the key: the
		// server announces in order, so once the key's announcement is
		// in, the other's would be too.
		before := c.Stats().Invalidations
		rdb.Set(ctx, "x"+k, "v", 0)
		rdb.Set(ctx, k, "v2", 0)
		redistest.Eventually(t, 10*time.Second, "invalidation of "+k, func() bool {
			_, ok := c.Get(k)
			return !ok
		})
		if n := c.Stats().Invalidations - before; n != 1 {
			t.Errorf("%d invalidations for one write of a tracked key and one of another", n)
		}
	}
}

// keysOnEveryServer returns a key with prefix on each server holding data.
func keysOnEveryServer(t *testing.T, rdb redis.UniversalClient, prefix string) []string {
	t.Helper()
	if _, ok := rdb.(*redis.ClusterClient); !ok {
		return []string{prefix + "{0}"}
	}
	servers := map[string]bool{}
	for _, addr := range redistest.MasterAddrs(t, rdb) {
		servers[addr] = false
	}
	var keys []string
	for i := 0; len(keys) < len(servers) && i < 10_000; i++ {
		k := fmt.Sprintf("%s{%d}", prefix, i)
		addr := redistest.Master(t, rdb, k).(*redis.Client).Options().Addr
		if !servers[addr] {
			servers[addr] = true
			keys = append(keys, k)
		}
	}
	if len(keys) != len(servers) {
		t.Fatalf("keys on %d of %d servers", len(keys), len(servers))
	}
	return keys
}
