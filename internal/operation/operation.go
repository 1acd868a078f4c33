// Package operation holds the rules every GraphQL operation passes,
// whatever transport carried it (POST, GET, multipart, both websocket
// subprotocols, SSE): the document limits, introspection, persisted-query
// registration, the per-operation gate (auth, budgets, execution slots,
// the response bound), the deadline and the mutation budget. They are
// gqlgen extensions and interceptors, registered in one place (Install),
// so that no transport can skip them. The HTTP edge (internal/httpapi)
// keeps only what is HTTP.
package operation

import (
	"context"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/ratelimit"
)

// Options are the limits and switches of the operation rules.
type Options struct {
	// Introspection enables schema introspection (off in production).
	Introspection bool
	// Suggestions enables "did you mean" hints in validation errors.
	Suggestions bool
	// Limits bound each document before gqlgen parses and validates it
	// (internal/gqlguard; docs/security.md); a zero field disables that
	// limit. Limits.ResponseBytes also bounds the response as it is built.
	Limits gqlguard.Limits
	// RequestTimeout bounds a query or mutation (not a subscription) on
	// every transport; 0 means no bound.
	RequestTimeout time.Duration
	// Limiter spends the per-address request budget, the per-user
	// mutation budget and the persisted-query registration budget; nil:
	// no limits.
	Limiter Limiter
	// PersistedQueries caches automatic persisted queries (hash →
	// document); nil: a small cache in this process.
	PersistedQueries graphql.Cache[string]
	// Slots are the process's execution slots, shared with the HTTP edge.
	Slots *Slots
	// Authn checks the token of every operation of a connection.
	Authn auth.Authenticator
	// Idempotency keeps mutations' idempotency keys and answers
	// (idempotency.go); nil: keys are ignored.
	Idempotency IdempotencyKeys
	// First are registered before every rule, so they see each operation
	// first on every transport: tracing, trusted documents.
	First []graphql.HandlerExtension
}

// Limiter spends rate-limit budgets (internal/ratelimit.Limiter).
type Limiter interface {
	Allow(ctx context.Context, rule, subject string) error
	// Has reports whether a rule is limited at all.
	Has(rule string) bool
}

// Rules are the operation rules of one handler.
type Rules struct {
	o     Options
	guard *gqlguard.Guard
	docs  graphql.Cache[*ast.QueryDocument]
	apq   graphql.Cache[string]
	work  *redisWork // nil: Redis work is not budgeted
	// tarpit holds the requests and socket operations of a client that
	// keeps sending while refused for its address's budgets.
	tarpit *ratelimit.Tarpit
}

// New returns the rules for operations of es.
func New(es graphql.ExecutableSchema, o Options) *Rules {
	if o.Slots == nil {
		o.Slots = NewSlots(0, 0)
	}
	r := &Rules{o: o, guard: gqlguard.New(o.Limits, graph.GuardModel(es.Schema())), tarpit: ratelimit.NewTarpit()}
	// Entry counts alone would let large documents fill the caches with
	// gigabytes: only small ones are kept. The guard reads the documents
	// gqlgen has parsed and validated rather than parse them again.
	r.docs = smallOnly[*ast.QueryDocument]{lru.New[*ast.QueryDocument](1000), func(q string, _ *ast.QueryDocument) int { return len(q) }}
	r.guard.UseParsed(func(q string) (*ast.QueryDocument, bool) { return r.docs.Get(context.Background(), q) })
	if wl, ok := o.Limiter.(WorkLimiter); ok && wl.Has(ratelimit.RuleRedisWork) {
		r.work = &redisWork{budget: wl, owing: map[string]time.Time{}}
	}
	r.apq = o.PersistedQueries
	if r.apq == nil {
		r.apq = smallOnly[string]{lru.New[string](1000), func(_, q string) int { return len(q) }}
	}
	return r
}

// RedisWorkOwed is how long a client address must wait before its
// Redis-work budget has room again, as far as this process knows (0: it
// may go on): the HTTP edge refuses its requests before reading them.
func (r *Rules) RedisWorkOwed(addr string) time.Duration {
	if r.work == nil {
		return 0
	}
	return r.work.owed([]string{"ip:" + addr})
}

// Tarpit holds the requests of a client that keeps sending while refused
// for its address's budgets: the HTTP edge's and the sockets' (one per
// handler, so a client meets it whatever carries its operations).
func (r *Rules) Tarpit() *ratelimit.Tarpit { return r.tarpit }

// Slots are the execution slots these rules admit operations to.
func (r *Rules) Slots() *Slots { return r.o.Slots }

// Install registers the rules on srv, in the order they apply; the
// execution's own middleware (graph.Execution.Install) comes after. This
// is the one place operation extensions and interceptors are registered.
func (r *Rules) Install(srv *handler.Server) {
	for _, e := range r.o.First {
		srv.Use(e)
	}
	srv.Use(socketBudget{budget: r.o.Limiter, owed: r.RedisWorkOwed, tarpit: r.tarpit})
	srv.SetQueryCache(r.docs)
	srv.Use(extension.AutomaticPersistedQuery{Cache: memoAPQ{r.apq}})
	// After the persisted-query extension (it fills the query in), before
	// parsing and validation. gqlgen's own complexity limit is not used:
	// its walk expands every fragment spread; the guard's cost is the same
	// figure computed without expanding.
	srv.Use(documentLimits{r.guard})
	srv.SetParserTokenLimit(r.o.Limits.Tokens)
	if r.o.Introspection {
		srv.Use(extension.Introspection{})
	} else {
		srv.Use(noIntrospection{})
	}
	srv.SetDisableSuggestion(!r.o.Suggestions)
	srv.SetValidationRulesFn(validationRules)
	srv.Use(oneSubscriptionField{})
	// Last of the checks of a document: what reaches it was valid and
	// allowed on its transport.
	srv.Use(apqRegister{cache: r.apq, budget: r.o.Limiter})
	// After every check that can refuse a document: an operation that
	// claims its connection's place is sure to be dispatched.
	srv.Use(connAdmission{})
	g := &gate{authn: r.o.Authn, slots: r.o.Slots, maxBytes: r.o.Limits.ResponseBytes, unread: newUnread(r.o.Limits.ResponseBytes)}
	srv.AroundOperations(g.around)
	srv.AroundOperations(deadline(r.o.RequestTimeout))
	// After the gate, which puts a websocket operation's viewer in the
	// context.
	if r.work != nil {
		srv.AroundOperations(r.work.around)
	}
	// After the gate (the viewer) and the deadline; a repeat answered
	// from its key spends no execution.
	if r.o.Idempotency != nil {
		srv.AroundOperations(idempotency{r.o.Idempotency}.around)
	}
	srv.AroundOperations(paceCostly)
	srv.AroundRootFields(pacedRootField)
	srv.AroundFields(boundFields)
	// The field middleware runs for every field: only when it has a
	// budget to spend.
	if r.o.Limiter != nil && r.o.Limiter.Has(ratelimit.RuleMutationUser) {
		srv.AroundFields(mutationBudget(r.o.Limiter))
	}
}

// smallOnly is a cache that keeps only entries whose size is at most
// maxCachedDocument bytes.
type smallOnly[T any] struct {
	graphql.Cache[T]
	size func(key string, v T) int
}

// maxCachedDocument is the largest document the query and persisted-query
// caches keep: 1000 entries of it stay within a few tens of megabytes,
// and ordinary documents are far smaller (the reference query is 400
// bytes).
const maxCachedDocument = 8 << 10

func (c smallOnly[T]) Add(ctx context.Context, key string, v T) {
	if c.size(key, v) <= maxCachedDocument {
		c.Cache.Add(ctx, key, v)
	}
}
