// Package httpapi is the HTTP edge of /query: what is HTTP and nothing
// else. It reads requests (URL parameters, JSON bodies, multipart
// uploads, websocket upgrades and messages), checks their headers, token
// and address budget, and writes responses, as a chain of middleware
// assembled in New, one per file. Every rule an operation must pass
// whatever carried it is the operation package's (internal/operation),
// installed on the gqlgen server this edge serves. It also serves posts'
// files at /media/, and makes and checks their addresses (media.go).
package httpapi

import (
	"net/http"
	"net/netip"
	"time"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/operation"
)

// Options are the HTTP edge's limits and switches.
type Options struct {
	// MaxBodyBytes bounds a request body; larger ones get 413. Zero
	// means 1 MiB.
	MaxBodyBytes int64
	// MaxBodyMemory bounds the bytes of JSON request bodies being read at
	// once, all requests together (each holds what its buffer has grown
	// to as its bytes arrived, until it is decoded; bodies.go), one
	// client address at most an eighth of it (and at least MaxBodyBytes);
	// a request that would pass it gets 503 with Retry-After, one past its
	// address's share 429. Zero means 64 MiB.
	MaxBodyMemory int64
	// MinBodyRate is the least rate, in bytes a second, at which a POST
	// body must arrive, measured over each BodyRateWindow (0: 5 s); a
	// slower one is cut with 408. 0: no minimum.
	MinBodyRate    int64
	BodyRateWindow time.Duration
	// RequestTimeout bounds an HTTP query or mutation; 0: no bound.
	RequestTimeout time.Duration
	// ResponseBytes bounds the response of an HTTP request; 0: no bound.
	ResponseBytes int
	// OriginAllowed decides whether a cross-origin browser may open a
	// websocket: the CORS allow-list (same-origin is always allowed; nil
	// allows no other origin).
	OriginAllowed func(*http.Request) bool
	// Limiter spends the per-address request budget; nil: none.
	Limiter operation.Limiter
	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// client address.
	TrustedProxies []netip.Prefix
	// Sockets bound websockets: how many, how idle, how often their
	// token is checked again.
	Sockets SocketLimits
	// Uploads bound multipart requests (files attached to a mutation).
	Uploads Uploads
}

// New returns the /query handler: srv, which has the operation rules and
// the execution installed, with its transports (POST, GET, multipart,
// websocket, SSE) behind the HTTP edge. rules are srv's: the edge
// measures a request's document with them once, and shares their
// execution slots.
func New(srv *handler.Server, rules *operation.Rules, authn auth.Authenticator, o Options) http.Handler {
	srv.AddTransport(websocketTransport(o.Sockets, authn))
	srv.AddTransport(transport.SSE{KeepAlivePingInterval: 15 * time.Second})
	srv.AddTransport(httpTransport{})
	websockets := chain(srv,
		newSockets(o.Sockets, authn).serve,
		authenticate(authn),
	)
	return chain(srv,
		noStore,
		ClientBudget(o.Limiter, o.TrustedProxies, rules.Tarpit()),
		redisWorkOwed(rules),
		upgrades(o.OriginAllowed, websockets), // upgrades leave the chain here
		readParams(o.MaxBodyBytes, newBodyBudget(o.MaxBodyMemory, o.MaxBodyBytes),
			bodyPace{rate: o.MinBodyRate, window: o.BodyRateWindow}, uploadCheck{o.Uploads, authn}),
		measure(rules),
		authenticate(authn),
		idempotencyKey,
		admission(rules.Slots(), o.RequestTimeout, o.ResponseBytes),
	)
}

// chain wraps h in middleware, the first outermost: read top to bottom,
// the order a request passes them.
func chain(h http.Handler, middleware ...func(http.Handler) http.Handler) http.Handler {
	for i := len(middleware) - 1; i >= 0; i-- {
		h = middleware[i](h)
	}
	return h
}
