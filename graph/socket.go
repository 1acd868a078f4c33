package graph

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/reqlog"
	"github.com/socialgw/gateway/internal/social"
)

// A websocket carries many operations over one HTTP request, so what HTTP
// checks once per request is checked here per connection (how many are
// open, how long they may stay idle, whether their token still holds) and
// by the operation gate (gate.go) per operation.

// SocketLimits bound websockets (docs/security.md).
type SocketLimits struct {
	// Max is the most websockets open in this process, MaxPerAddress the
	// most from one client address: one more upgrade is refused with 503
	// (429 per address) and Retry-After. 0: no bound.
	Max, MaxPerAddress int
	// Idle closes a connection that has had no operation running and none
	// started for this long (a subscription keeps it busy). 0: never.
	Idle time.Duration
	// Ping is how often the server pings (both subprotocols); on
	// graphql-transport-ws a peer that has not answered a ping within two
	// intervals is closed. 0: 15 s.
	Ping time.Duration
	// RecheckAuth is how often a connection opened with a token checks
	// that the token still holds (not expired, not revoked, its user
	// there); one that does not is closed with 4401.
	RecheckAuth time.Duration
	// Init is how long a connection may take to send connection_init;
	// then it is closed (4408 on graphql-transport-ws). 0: 10 s.
	Init time.Duration
}

// socketInFlight bounds the queries and mutations of one connection that
// are executing or whose answer is being written: a client that sends
// without reading holds at most this many answers in memory.
const socketInFlight = 8

// socketWriteTimeout is how long a message may take to reach a client
// that is not reading before the connection is closed.
const socketWriteTimeout = 10 * time.Second

// Close codes used here: graphql-transport-ws's, and RFC 6455's 1013 (try
// again later) for a client too slow to read.
const (
	closeTryAgain     = 1013
	closeUnauthorized = 4401
)

// socket is one websocket connection.
type socket struct {
	// reserved: the read loop holds a place of inflight for the message
	// it read last; claimed: an operation of that message took it over.
	// Only the read loop's goroutine touches them.
	reserved, claimed bool

	addr     string
	log      *slog.Logger
	inflight chan struct{}
	heavy    chan struct{} // one heavy answer (over heavyBytes) at a time
	subs     atomic.Int32
	running  atomic.Int32 // queries and mutations admitted and not yet answered
	last     atomic.Int64 // unix nanoseconds of the last operation's start or end
	closed   chan struct{}
	once     sync.Once

	mu    sync.Mutex
	conn  transport.WebsocketConn // set when accepted
	token string                  // the bearer token of connection_init or the upgrade
}

func (s *socket) setConn(c transport.WebsocketConn) {
	s.mu.Lock()
	s.conn = c
	s.mu.Unlock()
}

func (s *socket) setToken(t string) {
	s.mu.Lock()
	s.token = t
	s.mu.Unlock()
}

// bearerToken is the token the connection's operations are authorised with.
func (s *socket) bearerToken() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.token
}

type socketKey struct{}

func socketFrom(ctx context.Context) *socket {
	s, _ := ctx.Value(socketKey{}).(*socket)
	return s
}

func (s *socket) touch() { s.last.Store(time.Now().UnixNano()) }

// reserve is called by the read loop before it reads a message: it gives
// back the place of the last message unless an operation claimed it, then
// waits for a place for the next one; false when the connection closed.
func (s *socket) reserve() bool {
	if s.reserved && !s.claimed {
		<-s.inflight
	}
	s.reserved, s.claimed = false, false
	select {
	case s.inflight <- struct{}{}:
		s.reserved = true
		return true
	case <-s.closed:
		return false
	}
}

// claim hands the place reserved for the message just read to its
// operation.
func (s *socket) claim() { s.claimed = true }

// close ends the connection with a code and reason the client can act on;
// the server's own reasons (not the end of a connection that ended by
// itself) are logged, so an operator sees why clients were cut off.
func (s *socket) close(code int, reason string) {
	s.once.Do(func() {
		if reason != "" {
			s.log.Info("websocket closed by the server", "client", s.addr, "code", code, "reason", reason)
		}
		close(s.closed)
		s.mu.Lock()
		c := s.conn
		s.mu.Unlock()
		if c != nil {
			_ = c.WriteClose(code, reason)
			_ = c.Close()
		}
	})
}

// sockets counts open websockets, per address and in all.
type sockets struct {
	limits SocketLimits
	mu     sync.Mutex
	total  int
	byAddr map[string]int
}

func newSockets(l SocketLimits) *sockets {
	return &sockets{limits: l, byAddr: map[string]int{}}
}

// admit takes a place for a connection from addr; when there is none, the
// HTTP status to refuse the upgrade with (503 when the process is full,
// 429 when the address is) and why.
func (c *sockets) admit(addr string) (int, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.limits.Max > 0 && c.total >= c.limits.Max {
		return http.StatusServiceUnavailable, "the server holds as many websockets as it can: retry later"
	}
	if c.limits.MaxPerAddress > 0 && c.byAddr[addr] >= c.limits.MaxPerAddress {
		return http.StatusTooManyRequests, "too many websockets from this address: close some first"
	}
	c.total++
	c.byAddr[addr]++
	return 0, ""
}

func (c *sockets) leave(addr string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total--
	if c.byAddr[addr]--; c.byAddr[addr] <= 0 {
		delete(c.byAddr, addr)
	}
}

// serve admits a websocket upgrade, runs the connection with its
// socket in the context and watches it until it ends.
func (c *sockets) serve(w http.ResponseWriter, r *http.Request, authn auth.Authenticator, next http.Handler) {
	addr := social.ClientIP(r.Context())
	if status, msg := c.admit(addr); status != 0 {
		w.Header().Set("Retry-After", "5")
		writeErrors(w, status, &gqlerror.Error{Message: msg,
			Extensions: map[string]any{"code": string(social.RateLimited), "retryAfter": 5}})
		return
	}
	defer c.leave(addr)
	s := &socket{addr: addr, log: reqlog.Logger(r.Context()), inflight: make(chan struct{}, socketInFlight), heavy: make(chan struct{}, 1), closed: make(chan struct{})}
	s.setToken(bearer(r.Header.Get("Authorization")))
	s.touch()
	// The connection's operations are read one after another: one note
	// of a persisted query to register does for all (apq.go).
	ctx, cancel := context.WithCancel(withAPQPending(context.WithValue(r.Context(), socketKey{}, s)))
	defer cancel()
	go c.watch(ctx, s, authn)
	next.ServeHTTP(w, r.WithContext(ctx))
	s.close(1000, "")
}

// watch closes a connection that went idle or whose token stopped
// holding, checking at the sooner of the two bounds.
func (c *sockets) watch(ctx context.Context, s *socket, authn auth.Authenticator) {
	every := c.limits.RecheckAuth
	if every <= 0 {
		every = 30 * time.Second
	}
	if c.limits.Idle > 0 && c.limits.Idle < every {
		every = c.limits.Idle
	}
	t := time.NewTicker(every)
	defer t.Stop()
	ended := 0 // checks that found the token no longer holding
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.closed:
			return
		case <-t.C:
		}
		if token := s.bearerToken(); token != "" {
			if _, err := authn.Authenticate(ctx, token); err != nil && social.ErrorCode(err) != social.Internal {
				ended++
			}
		}
		// Open subscriptions check the token too, and end with an
		// UNAUTHENTICATED error the client can act on: the connection
		// closes once they have, or two checks later at the latest.
		if ended > 0 && (s.subs.Load() == 0 || ended > 2) {
			s.close(closeUnauthorized, "the access token expired or was revoked: reconnect with a fresh one")
			return
		}
		idle := time.Since(time.Unix(0, s.last.Load()))
		if c.limits.Idle > 0 && s.running.Load() == 0 && s.subs.Load() == 0 && idle >= c.limits.Idle {
			s.close(1000, "idle")
			return
		}
	}
}

// bearer is the token of an Authorization header ("" when absent or not
// a bearer token: auth.ViewerFromHeader refuses those).
func bearer(h string) string {
	token, ok := auth.BearerToken(h)
	if !ok {
		return ""
	}
	return token
}

// deadlineConn gives each write a deadline: a client that stops reading
// is disconnected rather than holding the answers written to it.
type deadlineConn struct {
	*checkedConn
}

func (c deadlineConn) WriteJSON(v any) error {
	t := time.AfterFunc(socketWriteTimeout, func() {
		if c.sock != nil {
			c.sock.close(closeTryAgain, "a message was not read within 10 s")
		}
		_ = c.checkedConn.Close()
	})
	defer t.Stop()
	return c.checkedConn.WriteJSON(withCodes(v))
}
