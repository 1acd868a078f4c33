package rcache_test

import (
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/rcache"
)

// TestCacheTickets walks the read protocol through its cases: a reply is
// kept only if nothing happened to its key between Begin and Finish.
func TestCacheTickets(t *testing.T) {
	cases := []struct {
		name    string
		between func(c *rcache.Cache[string])
		want    bool
	}{
		{"nothing in between", func(*rcache.Cache[string]) {}, true},
		{"the key invalidated", func(c *rcache.Cache[string]) { c.Invalidate("k") }, false},
		{"another key invalidated", func(c *rcache.Cache[string]) { c.Invalidate("other") }, true},
		{"flushed, tracking still up", func(c *rcache.Cache[string]) { c.Flush(true) }, false},
		{"tracking lost", func(c *rcache.Cache[string]) { c.SetLive(false) }, false},
		{"tracking lost and back", func(c *rcache.Cache[string]) { c.SetLive(false); c.SetLive(true) }, false},
		{"a second read of the key begun and finished", func(c *rcache.Cache[string]) {
			t2 := c.Begin("k")
			c.Finish(t2, "v2", true)
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := rcache.New[string](10, time.Minute)
			c.SetLive(true)
			tk := c.Begin("k")
			tc.between(c)
			c.Finish(tk, "v", true)
			_, ok := c.Get("k")
			if ok != tc.want {
				t.Fatalf("kept = %v, want %v", ok, tc.want)
			}
		})
	}
}

// TestCacheInvalidationWhileTwoReadsInFlight: an invalidation between two
// overlapping reads of one key spoils the older only.
func TestCacheInvalidationWhileTwoReadsInFlight(t *testing.T) {
	c := rcache.New[string](10, time.Minute)
	c.SetLive(true)
	older := c.Begin("k")
	c.Invalidate("k")
	newer := c.Begin("k")
	c.Finish(older, "old", true)
	if _, ok := c.Get("k"); ok {
		t.Fatal("the reply of a read begun before the invalidation was kept")
	}
	c.Finish(newer, "new", true)
	if v, ok := c.Get("k"); !ok || v != "new" {
		t.Fatalf("Get = %q, %v; want the newer read's value", v, ok)
	}
}

// TestCacheOff: a cache off (tracking not up yet) serves and keeps
// nothing; a nil cache is off.
func TestCacheOff(t *testing.T) {
	c := rcache.New[string](10, time.Minute)
	c.Finish(c.Begin("k"), "v", true)
	c.SetLive(true)
	if _, ok := c.Get("k"); ok {
		t.Fatal("a read begun while the cache was off was kept")
	}
	var none *rcache.Cache[string]
	none.Finish(none.Begin("k"), "v", true)
	if _, ok := none.Get("k"); ok || none.Live() {
		t.Fatal("a nil cache served a value")
	}
}

// TestCacheBounds: the least recently used entry goes first, and no entry
// is served at or past its maximum age.
func TestCacheBounds(t *testing.T) {
	now := time.Unix(1000, 0)
	c := rcache.New[string](2, time.Minute)
	c.SetClock(func() time.Time { return now })
	c.SetLive(true)
	for _, k := range []string{"a", "b"} {
		c.Finish(c.Begin(k), k, true)
	}
	c.Get("a")
	c.Finish(c.Begin("c"), "c", true)
	if _, ok := c.Get("b"); ok {
		t.Error("the least recently used entry outlived a full cache")
	}
	if _, ok := c.Get("a"); !ok {
		t.Error("a recently used entry was evicted")
	}
	now = now.Add(time.Minute)
	if _, ok := c.Get("a"); ok {
		t.Error("an entry was served at its maximum age")
	}
	if s := c.Stats(); s.Entries != 1 || s.Hits != 2 {
		t.Errorf("stats = %+v, want 1 entry (c) and 2 hits", s)
	}
}

// TestFixedCache: a cache of values that never change serves what Add
// stored without tracking, keeps at most its size (least recently used
// out), and forgets an invalidated key.
func TestFixedCache(t *testing.T) {
	c := rcache.NewFixed[string](2)
	c.Add("a", "1")
	c.Add("b", "2")
	if v, ok := c.Get("a"); !ok || v != "1" {
		t.Fatalf("Get(a) = %q, %v", v, ok)
	}
	c.Add("c", "3") // b is the least recently used
	if _, ok := c.Get("b"); ok {
		t.Fatal("b kept past the bound")
	}
	c.Invalidate("a")
	if _, ok := c.Get("a"); ok {
		t.Fatal("a served after its invalidation")
	}
	if v, ok := c.Get("c"); !ok || v != "3" {
		t.Fatalf("Get(c) = %q, %v", v, ok)
	}
	var off *rcache.Cache[string]
	off.Add("a", "1")
	if _, ok := off.Get("a"); ok {
		t.Fatal("a nil cache served a value")
	}
}
