package gateway

import (
	"net/http"
	"net/netip"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/graph/readpath"
	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/httpapi"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/operation"
)

// QueryOptions are the limits and switches of the /query handler.
type QueryOptions struct {
	// Introspection enables schema introspection (off in production).
	Introspection bool
	// Suggestions enables "did you mean" hints in validation errors.
	Suggestions bool
	// Limits bound each document before gqlgen parses and validates it
	// (internal/gqlguard; docs/security.md); a zero field disables that
	// limit. Limits.ResponseBytes also bounds the response as it is built.
	Limits gqlguard.Limits
	// MaxConcurrent caps the queries and mutations executing at once,
	// whatever carries them; excess ones wait up to QueueWait, then get
	// 503 with Retry-After. 0: no cap.
	MaxConcurrent int
	QueueWait     time.Duration
	// MaxBodyBytes bounds a request body; larger ones get 413.
	MaxBodyBytes int64
	// MaxBodyMemory bounds the bytes of JSON request bodies being read at
	// once, all requests together, one client address at most an eighth
	// (httpapi.Options). Zero means 64 MiB.
	MaxBodyMemory int64
	// MinBodyRate is the least rate, in bytes a second over each
	// BodyRateWindow (0: 5 s), at which a POST body must arrive; a slower
	// one is cut with 408. 0: no minimum.
	MinBodyRate    int64
	BodyRateWindow time.Duration
	// Loaders tunes the per-request dataloaders.
	Loaders loader.Config
	// RequestTimeout bounds a query or mutation (not a subscription) on
	// every transport, so that neither a stalled Redis nor CPU-bound work
	// piles requests up: past it the client gets a GraphQL error; 0 means
	// no bound.
	RequestTimeout time.Duration
	// OriginAllowed decides whether a cross-origin browser may open a
	// websocket: the CORS allow-list (same-origin is always allowed; nil
	// allows no other origin).
	OriginAllowed func(*http.Request) bool
	// Limiter spends the per-address request budget, the per-user
	// mutation budget and the persisted-query registration budget
	// (internal/ratelimit); nil: no limits.
	Limiter operation.Limiter
	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// client address.
	TrustedProxies []netip.Prefix
	// PersistedQueries caches automatic persisted queries (hash →
	// document); nil: a small cache in this process.
	PersistedQueries graphql.Cache[string]
	// Sockets bound websockets: how many, how idle, how often their
	// token is checked again.
	Sockets httpapi.SocketLimits
	// Uploads bound multipart requests (files attached to a mutation).
	Uploads httpapi.Uploads
	// FastStats receives the fast path's counts (served, fallbacks by
	// reason); nil: counted but not exported.
	FastStats *readpath.FastStats
	// Idempotency keeps mutations' idempotency keys; nil: keys are
	// ignored.
	Idempotency operation.IdempotencyKeys
	// Extensions are registered before every operation rule, so they see
	// each operation first on every transport: tracing, trusted documents.
	Extensions []graphql.HandlerExtension
}

// NewQuery returns a /query handler over services: graph's execution of
// the schema, the operation rules every transport's operations pass, and
// the HTTP edge in front. This is where the three are put together.
func NewQuery(services *graph.Resolver, store loader.Reader, authn auth.Authenticator, o QueryOptions) http.Handler {
	exec := graph.NewExecution(services, store, graph.ExecOptions{
		Loaders: o.Loaders, FastStats: o.FastStats,
	})
	rules := operation.New(exec.Schema, operation.Options{
		Introspection:    o.Introspection,
		Suggestions:      o.Suggestions,
		Limits:           o.Limits,
		RequestTimeout:   o.RequestTimeout,
		Limiter:          o.Limiter,
		PersistedQueries: o.PersistedQueries,
		Slots:            operation.NewSlots(o.MaxConcurrent, o.QueueWait),
		Authn:            authn,
		First:            o.Extensions,
		Idempotency:      o.Idempotency,
	})
	srv := handler.New(exec.Schema)
	rules.Install(srv)
	exec.Install(srv)
	return httpapi.New(srv, rules, authn, httpapi.Options{
		MaxBodyBytes:   o.MaxBodyBytes,
		MaxBodyMemory:  o.MaxBodyMemory,
		MinBodyRate:    o.MinBodyRate,
		BodyRateWindow: o.BodyRateWindow,
		RequestTimeout: o.RequestTimeout,
		ResponseBytes:  o.Limits.ResponseBytes,
		OriginAllowed:  o.OriginAllowed,
		Limiter:        o.Limiter,
		TrustedProxies: o.TrustedProxies,
		Sockets:        o.Sockets,
		Uploads:        o.Uploads,
	})
}
