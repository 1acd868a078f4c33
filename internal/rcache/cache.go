// Package rcache is a bounded local cache of Redis values kept fresh by
// Redis's invalidation messages (client-side caching in broadcast mode,
// tracking.go): an entry is served only while the tracking that would
// announce its key's next write is up, and never past a maximum age.
package rcache

import (
	"container/list"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Cache holds values by Redis key. The zero value is not usable; a nil
// *Cache is a cache that is always off (every method is safe on it).
//
// A read that may fill the cache goes: Get (a hit ends here); Begin,
// before the read is sent; Finish with the reply. Finish stores the value
// only if no invalidation of the key, no flush and no loss of tracking
// happened since Begin, so a reply that left Redis before a write but
// arrived after that write's invalidation is dropped.
type Cache[V any] struct {
	max    int
	maxAge time.Duration
	now    func() time.Time

	mu      sync.Mutex
	entries map[string]*list.Element
	lru     list.List // of *entry[V], most recently used first
	pending map[string]*pend
	live    bool   // tracking is up: entries may be served and stored
	gen     uint64 // moves on every flush; a ticket of another gen stores nothing

	hits, misses, invalidations, flushes, dropped atomic.Int64
}

type entry[V any] struct {
	key string
	v   V
	at  time.Time
}

// pend is the reads of one key in flight: an invalidation of the key
// moves epoch, and a read whose ticket saw another epoch stores nothing.
type pend struct {
	refs  int
	epoch uint64
}

// Ticket is a read in flight, from Begin to Finish.
type Ticket struct {
	key   string
	p     *pend
	epoch uint64
	gen   uint64
}

// maxPending bounds the keys read at once; past it (reads begun and never
// finished, after errors) every read in flight is forgotten, which is
// safe: their tickets then store nothing.
const maxPending = 1 << 16

// New returns a cache of at most size entries, each served for at most
// maxAge after it was read from Redis. It is off until SetLive(true).
func New[V any](size int, maxAge time.Duration) *Cache[V] {
	return &Cache[V]{max: size, maxAge: maxAge, now: time.Now,
		entries: make(map[string]*list.Element), pending: make(map[string]*pend)}
}

// SetClock replaces the clock that ages entries (tests).
func (c *Cache[V]) SetClock(now func() time.Time) { c.now = now }

// Get returns the value of key when the cache holds a fresh one.
func (c *Cache[V]) Get(key string) (V, bool) {
	var zero V
	if c == nil {
		return zero, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	el, ok := c.entries[key]
	if !ok || !c.live {
		c.misses.Add(1)
		return zero, false
	}
	e := el.Value.(*entry[V])
	if c.now().Sub(e.at) >= c.maxAge {
		c.remove(el)
		c.misses.Add(1)
		return zero, false
	}
	c.lru.MoveToFront(el)
	c.hits.Add(1)
	return e.v, true
}

// Begin registers a read of key about to be sent; the zero Ticket (cache
// nil or off) stores nothing.
func (c *Cache[V]) Begin(key string) Ticket {
	if c == nil {
		return Ticket{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live {
		return Ticket{}
	}
	if len(c.pending) >= maxPending {
		c.forgetPending()
	}
	p := c.pending[key]
	if p == nil {
		p = &pend{}
		c.pending[key] = p
	}
	p.refs++
	return Ticket{key: key, p: p, epoch: p.epoch, gen: c.gen}
}

// Finish ends the read of t. With store set (the read succeeded and v is
// worth keeping) it keeps v unless the key was invalidated, the cache
// flushed or tracking lost since Begin.
func (c *Cache[V]) Finish(t Ticket, v V, store bool) {
	if c == nil || t.p == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	t.p.refs--
	if t.p.refs == 0 && c.pending[t.key] == t.p {
		delete(c.pending, t.key)
	}
	if !store {
		return
	}
	if t.p.epoch != t.epoch || t.gen != c.gen || !c.live {
		c.dropped.Add(1)
		return
	}
	c.store(t.key, v)
}

// store keeps v under key, dropping the least recently used entries past
// the bound; c.mu is held.
func (c *Cache[V]) store(key string, v V) {
	if el, ok := c.entries[key]; ok {
		e := el.Value.(*entry[V])
		e.v, e.at = v, c.now()
		c.lru.MoveToFront(el)
		return
	}
	c.entries[key] = c.lru.PushFront(&entry[V]{key: key, v: v, at: c.now()})
	for c.lru.Len() > c.max {
		c.remove(c.lru.Back())
	}
}

// Invalidate forgets keys: Redis announced a write of them, or this
// process wrote them.
func (c *Cache[V]) Invalidate(keys ...string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, k := range keys {
		c.invalidations.Add(1)
		if el, ok := c.entries[k]; ok {
			c.remove(el)
		}
		if p := c.pending[k]; p != nil {
			p.epoch++
			delete(c.pending, k)
		}
	}
}

// Flush forgets every entry and every read in flight, and with live
// false keeps the cache off until SetLive(true): tracking was lost, so
// writes may have gone unannounced.
func (c *Cache[V]) Flush(live bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.flushes.Add(1)
	clear(c.entries)
	c.lru.Init()
	c.forgetPending()
	c.live = live
}

// SetLive turns the cache on (tracking is up) or off (flushing it).
func (c *Cache[V]) SetLive(live bool) {
	if !live {
		c.Flush(false)
		return
	}
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.live = true
}

// Live reports whether the cache serves entries.
func (c *Cache[V]) Live() bool {
	if c == nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.live
}

func (c *Cache[V]) forgetPending() {
	c.gen++
	clear(c.pending)
}

func (c *Cache[V]) remove(el *list.Element) {
	delete(c.entries, el.Value.(*entry[V]).key)
	c.lru.Remove(el)
}

// Stats are a cache's counters since it was made.
type Stats struct {
	Hits, Misses, Invalidations, Flushes, Dropped int64
	Entries                                       int
}

// Stats returns the counters: hits and misses of Get, keys invalidated,
// flushes, and replies dropped because their key changed in flight.
func (c *Cache[V]) Stats() Stats {
	if c == nil {
		return Stats{}
	}
	c.mu.Lock()
	n := len(c.entries)
	c.mu.Unlock()
	return Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Invalidations: c.invalidations.Load(),
		Flushes: c.flushes.Load(), Dropped: c.dropped.Load(), Entries: n}
}

// NewFixed returns a cache of at most size entries of values that never
// change in Redis once written, under keys that are never reused (a
// post's content: ids come from INCR). Such an entry needs no tracking
// and no age: the cache is live from the start, serves an entry until it
// is least recently used, and Add stores without a ticket. Whether the
// value still exists is for the caller to read from Redis.
func NewFixed[V any](size int) *Cache[V] {
	c := New[V](size, time.Duration(math.MaxInt64))
	c.live = true
	return c
}

// Add stores v under key; meant for a cache made by NewFixed.
func (c *Cache[V]) Add(key string, v V) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.live {
		return
	}
	c.store(key, v)
}
