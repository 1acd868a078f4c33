package operation

import (
	"context"
	"runtime"

	"github.com/99designs/gqlgen/graphql"
)

// A costly operation (IsCostly) runs its root fields, each with all that
// is below it, at most costlyFields at a time: a hundred aliased pages
// would otherwise put a hundred goroutines in the run queue at once, and
// every other operation's goroutines, woken by their Redis answers, would
// wait behind them for a core. The costly slots bound how many costly
// operations run at once; this bounds how much of the process each one
// keeps runnable. Ordinary operations are not paced.
var costlyFields = max(1, runtime.GOMAXPROCS(0)/2)

type paceKey struct{}

// paceCostly marks a costly operation's context with its root fields'
// places.
func paceCostly(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if r, ok := reportOf(graphql.GetOperationContext(ctx)); ok && IsCostly(r) {
		ctx = context.WithValue(ctx, paceKey{}, make(chan struct{}, costlyFields))
	}
	return next(ctx)
}

// pacedRootField resolves a root field of a costly operation once it has
// a place.
func pacedRootField(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	places, _ := ctx.Value(paceKey{}).(chan struct{})
	if places == nil {
		return next(ctx)
	}
	select {
	case places <- struct{}{}:
	case <-ctx.Done():
		return graphql.Null
	}
	defer func() { <-places }()
	return next(ctx)
}
