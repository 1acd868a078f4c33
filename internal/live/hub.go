// Package live streams home timelines to subscribers: a Hub per process
// holds the one Redis sharded pub/sub connection and hands its messages to
// per-subscriber buffers; a Timeline turns one subscriber's messages into
// posts, checked at delivery time, with a replay from the home timeline
// when it resumes from a post or when the hub lost messages.
package live

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
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
	// Ping is how often the hub pings Redis on its pub/sub connection; a
	// connection that answered nothing for three pings is replaced.
	// Default 5s.
	Ping time.Duration
	// MinBackoff and MaxBackoff bound the wait between attempts to get
	// the connection back. Defaults 100ms and 5s.
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
	Delivered   int64 // messages handed to subscriber buffers
	Dropped     int64 // subscribers dropped as too slow
	Reconnects  int64 // pub/sub connections replaced after a failure
}

// Hub multiplexes one sharded pub/sub connection to many subscribers. A
// channel is subscribed in Redis while at least one subscriber wants it.
// When the connection fails, the hub gets a new one with backoff,
// subscribes every wanted channel again, and tells the subscribers of the
// channels that may have lost messages to catch up (Sub.Resync).
type Hub struct {
	rdb redis.UniversalClient
	cfg HubConfig
	log *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
	wake   chan struct{} // the reconciler has work

	mu     sync.Mutex
	ps     *redis.PubSub
	chans  map[string]*channel // wanted channels
	inPS   map[string]bool     // channels asked of the current connection
	subs   int
	closed bool

	delivered, dropped, reconnects atomic.Int64
}

// channel is a wanted channel and its local subscribers.
type channel struct {
	subs      map[*Sub]struct{}
	ready     chan struct{} // closed when Redis first confirmed it
	confirmed bool          // confirmed on the current connection
	lost      bool          // was confirmed on a connection that failed
}

// NewHub starts a hub over rdb. Close stops it.
func NewHub(rdb redis.UniversalClient, cfg HubConfig, log *slog.Logger) *Hub {
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	h := &Hub{
		rdb: rdb, cfg: cfg.withDefaults(), log: log,
		ctx: ctx, cancel: cancel, wake: make(chan struct{}, 1),
		chans: make(map[string]*channel), inPS: make(map[string]bool),
	}
	h.ps = h.newPubSub()
	h.wg.Add(2)
	go h.receive()
	go h.reconcile()
	return h
}

// Close ends every subscription (ErrClosed) and the pub/sub connection.
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
	ps := h.ps
	h.mu.Unlock()
	h.cancel()
	_ = ps.Close()
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
	return Stats{Subscribers: h.subs, Channels: n, Delivered: h.delivered.Load(),
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
// have been lost (the connection failed and is back): the subscriber
// should catch up from the store.
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

// reconcile makes the connection's subscriptions match the wanted
// channels. It runs alone, so SSUBSCRIBE and SUNSUBSCRIBE go out in the
// order it decides, and their writes never hold the hub's lock.
func (h *Hub) reconcile() {
	defer h.wg.Done()
	for {
		select {
		case <-h.ctx.Done():
			return
		case <-h.wake:
		}
		h.mu.Lock()
		ps := h.ps
		var add, remove []string
		for name := range h.chans {
			if !h.inPS[name] {
				add = append(add, name)
				h.inPS[name] = true
			}
		}
		for name := range h.inPS {
			if h.chans[name] == nil {
				remove = append(remove, name)
				delete(h.inPS, name)
			}
		}
		h.mu.Unlock()
		// A failed write is the receive loop's business: it replaces the
		// connection, and the new one is asked for every wanted channel.
		// Sharded channels go one command each: in a cluster only
		// channels of one slot may share one.
		for _, name := range add {
			if h.cfg.Classic {
				_ = ps.Subscribe(h.ctx, name)
			} else {
				_ = ps.SSubscribe(h.ctx, name)
			}
		}
		for _, name := range remove {
			if h.cfg.Classic {
				_ = ps.Unsubscribe(h.ctx, name)
			} else {
				_ = ps.SUnsubscribe(h.ctx, name)
			}
		}
	}
}

// receive reads the connection and hands messages out; it replaces the
// connection when it fails or stops answering pings.
func (h *Hub) receive() {
	defer h.wg.Done()
	pings := time.NewTicker(h.cfg.Ping)
	defer pings.Stop()
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		for {
			select {
			case <-h.ctx.Done():
				return
			case <-pings.C:
				h.mu.Lock()
				ps := h.ps
				h.mu.Unlock()
				_ = ps.Ping(h.ctx)
			}
		}
	}()
	backoff := h.cfg.MinBackoff
	for {
		h.mu.Lock()
		ps := h.ps
		h.mu.Unlock()
		msg, err := ps.ReceiveTimeout(h.ctx, 3*h.cfg.Ping)
		if h.ctx.Err() != nil {
			return
		}
		if err != nil {
			h.log.Warn("live: pub/sub connection failed, reconnecting", "err", err, "backoff", backoff)
			h.replace()
			select {
			case <-h.ctx.Done():
				return
			case <-time.After(backoff/2 + rand.N(backoff/2+1)):
			}
			backoff = min(2*backoff, h.cfg.MaxBackoff)
			continue
		}
		backoff = h.cfg.MinBackoff
		switch m := msg.(type) {
		case *redis.Message:
			h.dispatch(m)
		case *redis.Subscription:
			h.confirm(m)
		}
	}
}

// newPubSub returns a pub/sub client with no channel yet.
func (h *Hub) newPubSub() *redis.PubSub {
	if h.cfg.Classic {
		return h.rdb.Subscribe(h.ctx)
	}
	return h.rdb.SSubscribe(h.ctx)
}

// replace swaps the connection for a new one that subscribes every wanted
// channel again; channels confirmed on the old one are marked lost.
func (h *Hub) replace() {
	h.reconnects.Add(1)
	h.mu.Lock()
	old := h.ps
	h.ps = h.newPubSub()
	clear(h.inPS)
	for _, c := range h.chans {
		if c.confirmed {
			c.confirmed, c.lost = false, true
		}
	}
	h.mu.Unlock()
	_ = old.Close()
	h.poke()
}

func (h *Hub) confirm(m *redis.Subscription) {
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.chans[m.Channel]
	if c == nil {
		return
	}
	switch m.Kind {
	case "ssubscribe", "subscribe":
		if c.confirmed {
			return
		}
		c.confirmed = true
		select {
		case <-c.ready:
		default:
			close(c.ready)
		}
		if c.lost {
			c.lost = false
			for s := range c.subs {
				select {
				case s.resync <- struct{}{}:
				default:
				}
				s.poke()
			}
		}
	case "sunsubscribe", "unsubscribe":
		// Still wanted: Redis dropped it on its own (in a cluster, when
		// its slot moved). Ask again; what came meanwhile is lost.
		if c.confirmed && h.inPS[m.Channel] {
			c.confirmed, c.lost = false, true
			delete(h.inPS, m.Channel)
			h.poke()
		}
	}
}

func (h *Hub) dispatch(m *redis.Message) {
	msg := Message{Channel: m.Channel, Payload: m.Payload}
	h.mu.Lock()
	defer h.mu.Unlock()
	c := h.chans[m.Channel]
	if c == nil {
		return
	}
	for s := range c.subs {
		select {
		case s.c <- msg:
			h.delivered.Add(1)
			s.poke()
		default:
			h.dropped.Add(1)
			h.dropLocked(s, ErrSlow)
		}
	}
}
