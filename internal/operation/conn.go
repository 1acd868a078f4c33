package operation

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// A connection (a websocket) carries many operations over one HTTP
// request. What HTTP checks once per request, the gate checks for each of
// its operations; Conn is the state it needs: the connection's token, its
// client address, the places of its operations in flight.

// InFlight bounds the queries and mutations of one connection that are
// executing or whose answer is being written: a client that sends without
// reading holds at most this many answers in memory, and at most the
// bytes its connection's and its address's unread bounds allow (unread).
const InFlight = 8

// CloseUnauthorized is graphql-transport-ws's close code for a token that
// no longer holds.
const CloseUnauthorized = 4401

// Conn is one connection's state.
type Conn struct {
	// reserved: the read loop holds a place of inflight for the message
	// it read last; claimed: an operation of that message took it over.
	// Only the read loop's goroutine touches them.
	reserved, claimed bool

	addr     string
	log      *slog.Logger
	inflight chan struct{}
	heavy    chan struct{} // one heavy answer at a time
	subs     atomic.Int32
	running  atomic.Int32 // queries and mutations admitted and not yet answered
	last     atomic.Int64 // unix nanoseconds of the last operation's start or end
	closed   chan struct{}
	once     sync.Once
	unread   int64 // bytes of answers executed and not yet written, under unread.mu

	mu     sync.Mutex
	closer func(code int, reason string) // set when accepted
	token  string                        // the bearer token of connection_init or the upgrade
}

// NewConn returns the state of a connection from addr opened with token
// ("" for none).
func NewConn(addr, token string, log *slog.Logger) *Conn {
	c := &Conn{addr: addr, log: log, token: token, inflight: make(chan struct{}, InFlight), heavy: make(chan struct{}, 1), closed: make(chan struct{})}
	c.Touch()
	return c
}

type connKey struct{}

// WithConn returns ctx carrying the connection c: its operations are
// admitted by the gate one by one.
func WithConn(ctx context.Context, c *Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// ConnFrom returns the connection ctx carries, or nil.
func ConnFrom(ctx context.Context) *Conn {
	c, _ := ctx.Value(connKey{}).(*Conn)
	return c
}

// Accepted records how to close the connection, once it is open.
func (c *Conn) Accepted(closer func(code int, reason string)) {
	c.mu.Lock()
	c.closer = closer
	c.mu.Unlock()
}

// SetToken replaces the token the connection's operations are authorised
// with (connection_init's wins over the upgrade's).
func (c *Conn) SetToken(t string) {
	c.mu.Lock()
	c.token = t
	c.mu.Unlock()
}

// Token is the bearer token the connection's operations are authorised
// with.
func (c *Conn) Token() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.token
}

// Addr is the client's address.
func (c *Conn) Addr() string { return c.addr }

// Touch records activity.
func (c *Conn) Touch() { c.last.Store(time.Now().UnixNano()) }

// Idle is how long the connection has had no operation running, none
// started and no subscription open (0 while it has).
func (c *Conn) Idle() time.Duration {
	if c.running.Load() != 0 || c.subs.Load() != 0 {
		return 0
	}
	return time.Since(time.Unix(0, c.last.Load()))
}

// Subscriptions is the number of subscriptions open.
func (c *Conn) Subscriptions() int { return int(c.subs.Load()) }

// Closed is closed when the connection is.
func (c *Conn) Closed() <-chan struct{} { return c.closed }

// Reserve is called by the read loop before it reads a message: it gives
// back the place of the last message unless an operation claimed it, then
// waits for a place for the next one; false when the connection closed.
func (c *Conn) Reserve() bool {
	if c.reserved && !c.claimed {
		<-c.inflight
	}
	c.reserved, c.claimed = false, false
	select {
	case c.inflight <- struct{}{}:
		c.reserved = true
		return true
	case <-c.closed:
		return false
	}
}

// claim hands the place reserved for the message just read to its
// operation.
func (c *Conn) claim() { c.claimed = true }

// Close ends the connection with a code and reason the client can act on;
// the server's own reasons (not the end of a connection that ended by
// itself) are logged, so an operator sees why clients were cut off.
func (c *Conn) Close(code int, reason string) {
	c.once.Do(func() {
		if reason != "" {
			c.log.Info("websocket closed by the server", "client", c.addr, "code", code, "reason", reason)
		}
		close(c.closed)
		c.mu.Lock()
		closer := c.closer
		c.mu.Unlock()
		if closer != nil {
			closer(code, reason)
		}
	})
}
