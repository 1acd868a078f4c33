package redisstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisproc"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// cachedStore returns a store over its own client with the profile cache
// on, once its tracking is up. The maximum age is long: a test passes by
// invalidation, never by expiry.
func cachedStore(t *testing.T, rdb redis.UniversalClient, prefix string) *redisstore.Store {
	t.Helper()
	s := redisstore.New(rdb, prefix)
	t.Cleanup(s.CacheProfiles(redisstore.ProfileCache{Size: 1000, MaxAge: time.Hour, Log: redistest.Logger(t)}))
	redistest.Eventually(t, 10*time.Second, "profile cache tracking up", s.ProfileCacheLive)
	return s
}

// bio reads id's bio through s.
func bio(t *testing.T, s *redisstore.Store, id string) string {
	t.Helper()
	u, err := s.User(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return u.Bio
}

// cachedRead reads id through s until the cache serves it (a read
// answered before an earlier write's announcement is not kept).
func cachedRead(t *testing.T, s *redisstore.Store, id string) {
	t.Helper()
	redistest.Eventually(t, 10*time.Second, "user "+id+" cached", func() bool {
		hits := s.ProfileCacheStats().Hits
		bio(t, s, id)
		return s.ProfileCacheStats().Hits > hits
	})
}

// TestProfileCacheAcrossStores: a profile edit made through one store
// (gateway) is seen through another, whose cache held the profile, once
// Redis's announcement arrives, for users on every server; its author's
// store sees it at once.
func TestProfileCacheAcrossStores(t *testing.T) {
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	a := cachedStore(t, redistest.Client(t), prefix)
	b := cachedStore(t, redistest.Client(t), prefix)
	for _, id := range usersOnEveryServer(t, a) {
		cachedRead(t, a, id)
		cachedRead(t, b, id)
		if err := b.UpdateBio(ctx, id, "edited "+id); err != nil {
			t.Fatal(err)
		}
		if got := bio(t, b, id); got != "edited "+id {
			t.Errorf("the author's store read %q right after the edit", got)
		}
		redistest.Eventually(t, 10*time.Second, "the edit of "+id+" seen by the other store", func() bool {
			return bio(t, a, id) == "edited "+id
		})
	}
}

// TestProfileCacheQuietOnOtherWrites: writes of a user's other keys (a
// follow, a post) are not announced to the cache; the profile edit that
// follows them on the same server is, once.
func TestProfileCacheQuietOnOtherWrites(t *testing.T) {
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	a := cachedStore(t, redistest.Client(t), prefix)
	b := redisstore.New(redistest.Client(t), prefix)
	ids := users(t, a, 2)
	// The two registrations' announcements, which may come from two
	// masters in any order, are in before counting.
	redistest.Eventually(t, 10*time.Second, "the registrations announced", func() bool {
		return a.ProfileCacheStats().Invalidations >= 2
	})
	cachedRead(t, a, ids[0])
	before := a.ProfileCacheStats().Invalidations
	if err := b.Follow(ctx, ids[0], ids[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := b.CreatePost(ctx, ids[0], social.NewPost{Content: "hello"}); err != nil {
		t.Fatal(err)
	}
	if err := b.UpdateBio(ctx, ids[0], "edited"); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 10*time.Second, "the edit seen", func() bool { return bio(t, a, ids[0]) == "edited" })
	if n := a.ProfileCacheStats().Invalidations - before; n != 1 {
		t.Errorf("%d invalidations for a follow, a post and one profile edit, want 1", n)
	}
}

// TestProfileCacheEmptiedByRestart: a Redis restart empties the cache.
// The server comes back empty, so a profile served after it would be
// stale: the user no longer exists.
func TestProfileCacheEmptiedByRestart(t *testing.T) {
	redistest.Slow(t, "restarts a redis-server")
	srv, err := redisproc.Start()
	if err != nil {
		t.Skip(err)
	}
	t.Cleanup(srv.Stop)
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	s := cachedStore(t, rdb, "r:")
	id := users(t, s, 1)[0]
	cachedRead(t, s, id)
	flushes := s.ProfileCacheStats().Flushes

	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 10*time.Second, "the cache emptied and tracking back", func() bool {
		return s.ProfileCacheStats().Flushes > flushes && s.ProfileCacheLive()
	})
	redistest.Eventually(t, 10*time.Second, "a read answered", func() bool {
		_, err := s.Users(context.Background(), []string{id})
		return err == nil
	})
	us, err := s.Users(context.Background(), []string{id})
	if err != nil || us[0] != nil {
		t.Fatalf("after the restart, user %s = %+v, %v; want none (the server came back empty)", id, us[0], err)
	}
}

// users registers n users through s.
func users(t *testing.T, s *redisstore.Store, n int) []string {
	t.Helper()
	var ids []string
	for i := range n {
		u, err := s.CreateUser(context.Background(), account(fmt.Sprint("u", i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u.ID)
	}
	return ids
}

// usersOnEveryServer registers users until each server holding data (each
// master of a cluster) has one of them, and returns one a server.
func usersOnEveryServer(t *testing.T, s *redisstore.Store) []string {
	t.Helper()
	cc, ok := s.Client().(*redis.ClusterClient)
	if !ok {
		return users(t, s, 1)
	}
	masters := map[string]bool{}
	for _, addr := range redistest.MasterAddrs(t, cc) {
		masters[addr] = false
	}
	var ids []string
	for i := 0; len(ids) < len(masters) && i < 200; i++ {
		u, err := s.CreateUser(context.Background(), account(fmt.Sprint("m", i)))
		if err != nil {
			t.Fatal(err)
		}
		addr := redistest.Master(t, cc, s.Keys().User(u.ID)).(*redis.Client).Options().Addr
		if !masters[addr] {
			masters[addr] = true
			ids = append(ids, u.ID)
		}
	}
	if len(ids) != len(masters) {
		t.Fatalf("users on %d of %d masters", len(ids), len(masters))
	}
	return ids
}

// TestProfileCacheClusterFailover kills the master of a cached profile's
// slot, on a cluster of its own: the cache is emptied, tracking comes
// back on the promoted replica, and an edit made there is announced.
func TestProfileCacheClusterFailover(t *testing.T) {
	c, rdb := redistest.OwnCluster(t)
	other, err := redisstore.Connect(c.URL(), true)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = other.Close() })
	s := cachedStore(t, rdb, "f:")
	writer := redisstore.New(other, "f:")
	ctx := context.Background()
	id := users(t, s, 1)[0]
	cachedRead(t, s, id)
	master, err := c.Master(s.Keys().User(id))
	if err != nil {
		t.Fatal(err)
	}
	direct := redis.NewClient(&redis.Options{Addr: master.Addr})
	if n, err := direct.Do(ctx, "WAIT", 1, 2000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT for the replica: %d, %v", n, err)
	}
	_ = direct.Close()
	flushes := s.ProfileCacheStats().Flushes

	master.Stop()
	redistest.Eventually(t, 30*time.Second, "the cache emptied", func() bool { return s.ProfileCacheStats().Flushes > flushes })
	redistest.Eventually(t, 60*time.Second, "the edit made after the failover", func() bool {
		return writer.UpdateBio(ctx, id, "after the failover") == nil
	})
	redistest.Eventually(t, 30*time.Second, "tracking back on every master", s.ProfileCacheLive)
	cachedRead(t, s, id)
	if err := writer.UpdateBio(ctx, id, "edited on the new master"); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 10*time.Second, "the edit announced by the promoted replica", func() bool {
		return bio(t, s, id) == "edited on the new master"
	})
}

// TestUsersWithRedisDown: reading users from a Redis that does not answer
// is an error, not a panic, with the profile cache on and off.
func TestUsersWithRedisDown(t *testing.T) {
	ctx := context.Background()
	for _, cache := range []bool{false, true} {
		down := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
		t.Cleanup(func() { _ = down.Close() })
		s := redisstore.New(down, redistest.Prefix(t))
		if cache {
			t.Cleanup(s.CacheProfiles(redisstore.ProfileCache{Size: 10, MaxAge: time.Hour, Log: redistest.Logger(t)}))
		}
		if u, err := s.Users(ctx, []string{"1", "2"}); err == nil {
			t.Errorf("cache %v: users %v and no error from a Redis that is down", cache, u)
		}
	}
}
