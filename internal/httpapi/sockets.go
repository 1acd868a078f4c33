package httpapi

import (
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/clientaddr"
	"github.com/socialgw/gateway/internal/operation"
	"github.com/socialgw/gateway/internal/reqlog"
	"github.com/socialgw/gateway/internal/social"
)

// A websocket carries many operations over one HTTP request, so what HTTP
// checks once per request is checked here per connection (how many are
// open, how long they may stay idle, whether their token still holds) and
// by the operation gate (internal/operation) per operation.

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

// sockets counts open websockets, per address and in all.
type sockets struct {
	limits SocketLimits
	authn  auth.Authenticator
	mu     sync.Mutex
	total  int
	byAddr map[string]int
}

func newSockets(l SocketLimits, authn auth.Authenticator) *sockets {
	return &sockets{limits: l, authn: authn, byAddr: map[string]int{}}
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

// serve is the middleware of websocket upgrades: it admits the
// connection, runs it with its operation.Conn in the context and watches
// it until it ends.
func (c *sockets) serve(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr := clientaddr.From(r.Context())
		if status, msg := c.admit(addr); status != 0 {
			w.Header().Set("Retry-After", "5")
			writeErrors(w, status, &gqlerror.Error{Message: msg,
				Extensions: map[string]any{"code": string(social.RateLimited), "retryAfter": 5}})
			return
		}
		defer c.leave(addr)
		s := operation.NewConn(addr, bearer(r.Header.Get("Authorization")), reqlog.Logger(r.Context()))
		// The connection's operations are read one after another: one note
		// of a persisted query to register does for all.
		ctx, cancel := context.WithCancel(operation.WithRegistration(operation.WithConn(r.Context(), s)))
		defer cancel()
		go c.watch(ctx, s)
		next.ServeHTTP(w, r.WithContext(ctx))
		s.Close(1000, "")
	})
}

// watch closes a connection that went idle or whose token stopped
// holding, checking at the sooner of the two bounds.
func (c *sockets) watch(ctx context.Context, s *operation.Conn) {
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
		case <-s.Closed():
			return
		case <-t.C:
		}
		if token := s.Token(); token != "" {
			if _, err := c.authn.Authenticate(ctx, token); err != nil && social.ErrorCode(err) != social.Internal {
				ended++
			}
		}
		// Open subscriptions check the token too, and end with an
		// UNAUTHENTICATED error the client can act on: the connection
		// closes once they have, or two checks later at the latest.
		if ended > 0 && (s.Subscriptions() == 0 || ended > 2) {
			s.Close(operation.CloseUnauthorized, "the access token expired or was revoked: reconnect with a fresh one")
			return
		}
		if c.limits.Idle > 0 && s.Idle() >= c.limits.Idle {
			s.Close(1000, "idle")
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
