package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/graph/readpath"
	"github.com/socialgw/gateway/internal/gqlerr"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/social"
)

// ExecOptions choose how operations are executed.
type ExecOptions struct {
	// Loaders tunes the per-request dataloaders.
	Loaders loader.Config
	// FastStats receives the fast path's counts (served, fallbacks by
	// reason); nil: counted but not exported.
	FastStats *readpath.FastStats
}

// Execution is the executable schema bound to a copy of the services,
// and the middleware that runs its operations.
type Execution struct {
	Schema  graphql.ExecutableSchema
	r       *Resolver
	loaders *loader.Factory
}

// NewExecution returns the execution of services over store.
func NewExecution(services *Resolver, store loader.Reader, o ExecOptions) *Execution {
	r := services.reading(o.FastStats)
	e := &Execution{r: &r, loaders: loader.NewFactory(store, o.Loaders)}
	e.Schema = NewExecutableSchema(Config{Resolvers: &r})
	return e
}

// Install adds the execution's own middleware to srv, after the
// operation guards (internal/operation): the store's read budget, the
// error presenter, how subscriptions end, per-response loaders and the
// fast path.
func (e *Execution) Install(srv *handler.Server) {
	// Every operation, whatever carries it, may make the store read past
	// its pages' sizes only so far (social.ReadBudget); the operation
	// rules give it one when they meter its Redis work.
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		if social.HasReadBudget(ctx) {
			return next(ctx)
		}
		return next(social.WithReadBudget(ctx, social.DefaultReadBudget))
	})
	srv.SetErrorPresenter(gqlerr.Present)
	srv.AroundOperations(gqlerr.EndStreams)
	srv.SetRecoverFunc(gqlerr.Recover)
	// A subscription's root field runs before its first response: it gets
	// loaders of the operation, which it only renews per event (shownLive).
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		if oc := graphql.GetOperationContext(ctx); oc.Operation != nil && oc.Operation.Operation == ast.Subscription {
			ctx = loader.With(ctx, e.loaders.New(social.ViewerID(ctx)))
		}
		return next(ctx)
	})
	// Fresh loaders for every response: per request over HTTP, per event
	// on a subscription, so no cache outlives what it was read for.
	srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		ctx = loader.With(ctx, e.loaders.New(social.ViewerID(ctx)))
		resp := next(ctx)
		if afterResponse != nil {
			afterResponse(ctx, resp)
		}
		return resp
	})
	// Fresh loaders for each mutation field, and the timeline fast path
	// for queries. The fast path renders a query's timeline fields without
	// calling field middleware (srv.AroundFields): middleware that must act
	// on query fields has the fast path decline, or does not rely on it.
	// (The operation guards' mutation budget acts on Mutation's root
	// fields only, which the fast path never renders.)
	srv.AroundRootFields(readpath.FreshLoaders)
	if !e.r.genericOnly {
		srv.AroundRootFields((&readpath.FastPath{Pages: e.r.Posts, Stats: e.r.fast, Pictures: e.r.pictureURLs()}).Serve)
	}
}

// reading returns the resolver an execution serves with: services with
// the read path and the fast path's counters (a zeroed set when stats is
// nil).
func (r *Resolver) reading(stats *readpath.FastStats) Resolver {
	out := *r
	if out.read == nil {
		out.read = readpath.New()
	}
	out.fast = stats
	if out.fast == nil {
		out.fast = readpath.NewFastStats()
	}
	return out
}

// afterResponse, when set (by this package's tests), sees every response
// with its operation.
var afterResponse func(context.Context, *graphql.Response)
