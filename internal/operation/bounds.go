package operation

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/social"
)

// What bounds an operation as it executes: its deadline and the size of
// the response it builds.

var (
	// ErrDeadline is the cause of the context of an operation past its
	// deadline.
	ErrDeadline = gqlerror.Errorf("the request ran out of time")
	// ErrTooLarge is the cause of the context of an operation whose
	// response outgrew its bound.
	ErrTooLarge = gqlerror.Errorf("the response is too large")
)

// budget counts the bytes of the fields a response has resolved so far,
// so that an oversized response stops being built, not only sent.
type budget struct {
	used atomic.Int64
	max  int64
	over func()
}

type budgetKey struct{}

// WithResponseBudget returns ctx in which the fields resolved may add up
// to max bytes (0: no bound); past them over is called and the remaining
// fields end at once.
func WithResponseBudget(ctx context.Context, max int, over func()) context.Context {
	if max <= 0 {
		return ctx
	}
	return context.WithValue(ctx, budgetKey{}, &budget{max: int64(max), over: over})
}

// boundFields is the field middleware that makes CPU-bound execution
// check its context: once the operation is past its deadline or over its
// response budget, every remaining field ends at once instead of resolving
// (and, in a list, instead of resolving each item). A field that fails
// because its operation was canceled meanwhile ends the same way.
func boundFields(ctx context.Context, next graphql.Resolver) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, stopped(ctx)
	}
	res, err := next(ctx)
	if err != nil && errors.Is(ctx.Err(), context.Canceled) {
		// Its client left (or its response grew too large) while it
		// resolved: the store's "context canceled" is no internal
		// error to log, and no one reads it.
		return nil, stopped(ctx)
	}
	if b, ok := ctx.Value(budgetKey{}).(*budget); ok {
		n := int64(16)
		if s, ok := res.(string); ok {
			n += int64(len(s))
		} else if s, ok := res.(*string); ok && s != nil {
			n += int64(len(*s))
		}
		if b.used.Add(n) > b.max {
			b.over()
			return nil, stopped(ctx)
		}
	}
	return res, err
}

// stopped is the error of a field left unresolved: over HTTP the
// response it belongs to is replaced by the edge's error, so it is never
// seen; over a websocket it says why the operation ended.
func stopped(ctx context.Context) error {
	if context.Cause(ctx) == ErrTooLarge {
		return &gqlerror.Error{Message: "the response is too large", Extensions: map[string]any{"code": gqlguard.CodeComplexity}}
	}
	return &social.Error{Code: social.Internal, Message: "the request ran out of time"}
}

// deadline bounds queries and mutations that arrive without a deadline
// (over a websocket: HTTP requests have theirs from the edge).
func deadline(d time.Duration) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		oc := graphql.GetOperationContext(ctx)
		if _, has := ctx.Deadline(); has || d <= 0 || oc.Operation == nil || oc.Operation.Operation == ast.Subscription {
			return next(ctx)
		}
		ctx, cancel := context.WithTimeoutCause(ctx, d, ErrDeadline)
		h := next(ctx)
		first := true
		return func(rctx context.Context) *graphql.Response {
			defer cancel()
			// The transport's context, not ctx: it carries what the
			// middleware after this one put in it (the read budget, the
			// Redis-work meter), which ctx does not; the deadline is put
			// on it again in case a transport's context is not ctx's.
			dl, _ := ctx.Deadline()
			rctx, stop := context.WithDeadlineCause(rctx, dl, ErrDeadline)
			defer stop()
			resp := h(rctx)
			// Only in place of the first response: later calls ask whether
			// there is another, and nil ends the operation.
			wasFirst := first
			first = false
			if resp == nil && wasFirst && context.Cause(ctx) == ErrDeadline {
				return &graphql.Response{Errors: gqlerror.List{{
					Message:    fmt.Sprintf("the request took longer than %s and was stopped", d),
					Extensions: map[string]any{"code": string(social.Internal)},
				}}}
			}
			return resp
		}
	}
}
