// Package live streams home timelines to subscribers: a Hub per process
// holds the Redis sharded pub/sub connections (one per Redis master that
// serves a wanted channel) and hands their messages to per-subscriber
// buffers; a Timeline turns one subscriber's messages into posts, checked
// at delivery time, with a replay from the home timeline when it resumes
// from a post or when the hub lost messages.
package live

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// HubConfig tunes a Hub; zero fields take the defaults.
type HubConfig struct {
	// Buffer is how many messages a subscriber may have waiting; one
	// more and it is dropped as too slow (ErrSlow). Default 64: a
	// subscriber checks what is waiting in batches, so only a burst of
	// that many posts landing in one timeline within one check overflows
	// it, and every subscriber's buffer is allocated up front.
	Buffer int
	// Ping is how often the hub pings Redis on its pub/sub connections; a
	// connection that answered nothing for three pings is replaced.
	// Default 5s.
	Ping time.Duration
	// MinBackoff and MaxBackoff bound the wait between attempts to get
	// a failed connection's channels back. Defaults 100ms and 5s.
	MinBackoff, MaxBackoff time.Duration
	// ConfirmTimeout bounds how long Subscribe waits for Redis to confirm
	// a new channel. Default 10s.
	ConfirmTimeout time.Duration
	// Classic subscribes with SUBSCRIBE instead of SSUBSCRIBE: for the
	// embedded development Redis, which has no sharded pub/sub (the store
	// then publishes with PUBLISH).
	Classic bool
}

func (c HubConfig) withDefaults() HubConfig {
	if c.Buffer <= 0 {
		c.Buffer = 64
	}
	if c.Ping <= 0 {
		c.Ping = 5 * time.Second
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 100 * time.Millisecond
	}
	if c.MaxBackoff < c.MinBackoff {
		c.MaxBackoff = max(5*time.Second, c.MinBackoff)
	}
	if c.ConfirmTimeout <= 0 {
		c.ConfirmTimeout = 10 * time.Second
	}
	return c
}

// Errors that end a subscription from the hub's side.
var (
	// ErrSlow: the subscriber's buffer was full, it was dropped so that
	// it does not hold the others up.
	ErrSlow = errors.New("live: subscriber too slow, dropped")
	// ErrClosed: the hub was closed (the process is stopping).
	ErrClosed = errors.New("live: hub closed")
	// ErrUnavailable: Redis did not confirm the subscription in time.
	ErrUnavailable = errors.New("live: pub/sub unavailable")
)

// Message is one pub/sub message as a subscriber gets it.
type Message struct {
	Channel string
	Payload string
}

// Stats are a hub's counters since it started.
type Stats struct {
	Subscribers int   // open subscriptions
	Channels    int   // channels subscribed in Redis
	Conns       int   // pub/sub connections open (one per master in use)
	Delivered   int64 // messages handed to subscriber buffers
	Dropped     int64 // subscribers dropped as too slow
	Reconnects  int64 // pub/sub connections that failed and were replaced
}

// Hub multiplexes sharded pub/sub connections to many subscribers. A
// channel is subscribed in Redis while at least one subscriber wants it,
// on the connection to the master that serves its slot: a sharded channel
// lives on one shard of a Redis Cluster (on a single server, every channel
// shares the one connection). When a connection fails, its channels are
// routed and subscribed again with backoff, and the subscribers of those
// that may have lost messages are told to catch up (Sub.Resync); a
// failover or a resharding moves a channel the same way.
type Hub struct {
	route router
	cfg   HubConfig
	log   *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	wake   chan struct{} // the reconciler has work

	mu      sync.Mutex
	conns   map[string]*conn    // by master address
	chans   map[string]*channel // wanted channels
	subs    int
	closed  bool
	retryAt time.Time     // no new routing before (after a failure)
	backoff time.Duration // the next failure's wait

	delivered, dropped, reconnects atomic.Int64
}

// channel is a wanted channel and its local subscribers.
type channel struct {
	subs      map[*Sub]struct{}
	ready     chan struct{} // closed when Redis first confirmed it
	conn      *conn         // where it was asked; nil: to be routed
	confirmed bool          // confirmed on conn
	lost      bool          // was confirmed on a connection that failed
}

// NewHub starts a hub over rdb: a single server's client, or a cluster
// client whose masters each get their own connection. Close stops it.
func NewHub(rdb redis.UniversalClient, cfg HubConfig, log *slog.Logger) *Hub {
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Hub{
		route: newRouter(rdb), cfg: cfg.withDefaults(), log: log,
		ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1),
		conns: make(map[string]*conn), chans: make(map[string]*channel),
	}
	h.backoff = h.cfg.MinBackoff
	h.wg.Add(2)
	go h.reconcile()
	go h.ping()
	return h
}

// Close ends every subscription (ErrClosed) and the pub/sub connections.
func (h *Hub) Close() {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	for _, c := range h.chans {
		for s := range c.subs {
			h.dropLocked(s, ErrClosed)
		}
	}
	conns := make([]*conn, 0, len(h.conns))
	for _, cn := range h.conns {
		conns = append(conns, cn)
	}
	clear(h.conns)
	h.mu.Unlock()
	h.cancel()
	for _, cn := range conns {
		_ = cn.ps.Close()
	}
	h.wg.Wait()
}

// Stats returns the hub's counters.
func (h *Hub) Stats() Stats {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, c := range h.chans {
		if c.confirmed {
			n++
		}
	}
	return Stats{Subscribers: h.subs, Channels: n, Conns: len(h.conns), Delivered: h.delivered.Load(),
		Dropped: h.dropped.Load(), Reconnects: h.reconnects.Load()}
}

// Sub is one subscriber: its messages arrive on C until Done is closed.
type Sub struct {
	hub      *Hub
	channels []string
	c        chan Message
	done     chan struct{}
	resync   chan struct{}
	notify   func()
	err      error // why done was closed; set before, under hub.mu
}

// poke tells the subscriber's owner that something happened: a message,
// a resync, or the end. It runs under the hub's lock and must not block.
func (s *Sub) poke() {
	if s.notify != nil {
		s.notify()
	}
}

// C delivers the subscriber's messages.
func (s *Sub) C() <-chan Message { return s.c }

// Done is closed when the subscription ended: Close, too slow, or the
// hub closed. Err says which.
func (s *Sub) Done() <-chan struct{} { return s.done }

// Err is why Done was closed (nil after Close).
func (s *Sub) Err() error {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.err
}

// Resync receives a value when messages of the subscriber's channels may
// have been lost (a connection failed and the channel is back): the
// subscriber should catch up from the store.
func (s *Sub) Resync() <-chan struct{} { return s.resync }

// Close ends the subscription; the hub leaves channels nobody wants.
func (s *Sub) Close() {
	h := s.hub
	h.mu.Lock()
	defer h.mu.Unlock()
	h.dropLocked(s, nil)
}

// Subscribe subscribes to channels and returns once Redis has confirmed
// every one of them, so that any message published afterwards reaches the
// subscriber: a reader of the store after Subscribe misses nothing
// between the two. notify, when set, is called (without blocking, under
// the hub's lock) after each message, resync and at the end, so that the
// owner needs no goroutine waiting on the channels while it is idle.
func (h *Hub) Subscribe(ctx context.Context, notify func(), channels ...string) (*Sub, error) {
	s := &Sub{hub: h, channels: channels, c: make(chan Message, h.cfg.Buffer),
		done: make(chan struct{}), resync: make(chan struct{}, 1), notify: notify}
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return nil, ErrClosed
	}
	ready := make([]chan struct{}, 0, len(channels))
	fresh := false
	for _, name := range channels {
		c := h.chans[name]
		if c == nil {
			c = &channel{subs: make(map[*Sub]struct{}), ready: make(chan struct{})}
			h.chans[name] = c
			fresh = true
		}
		c.subs[s] = struct{}{}
		ready = append(ready, c.ready)
	}
	h.subs++
	h.mu.Unlock()
	if fresh {
		h.poke()
	}
	wait, cancel := context.WithTimeout(ctx, h.cfg.ConfirmTimeout)
	defer cancel()
	for _, r := range ready {
		select {
		case <-r:
		case <-s.done:
			return nil, s.Err()
		case <-wait.Done():
			s.Close()
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, ErrUnavailable
		}
	}
	return s, nil
}

// dropLocked removes s from the hub and closes its Done with err.
func (h *Hub) dropLocked(s *Sub, err error) {
	select {
	case <-s.done:
		return
	default:
	}
	s.err = err
	close(s.done)
	s.poke()
	h.subs--
	leave := false
	for _, name := range s.channels {
		c := h.chans[name]
		if c == nil {
			continue
		}
		delete(c.subs, s)
		if len(c.subs) == 0 {
			delete(h.chans, name)
			leave = true
		}
	}
	if leave {
		h.poke()
	}
}

func (h *Hub) poke() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// ping pings every connection each Ping, so a connection to a master that
// went silent (a frozen or unplugged server sends no error) is noticed by
// its receive loop's timeout.
func (h *Hub) ping() {
	defer h.wg.Done()
	t := time.NewTicker(h.cfg.Ping)
	defer t.Stop()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-t.C:
		}
		h.mu.Lock()
		conns := make([]*conn, 0, len(h.conns))
		for _, cn := range h.conns {
			conns = append(conns, cn)
		}
		h.mu.Unlock()
		for _, cn := range conns {
			_ = cn.ps.Ping(h.ctx)
		}
	}
}
