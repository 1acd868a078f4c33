package gqlerr

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// A subscription whose stream ends on its own (token expired or revoked,
// client too slow) must tell the client why, so it can reconnect as it
// should. gqlgen only sees its channel close; EndStreams, around every
// subscription, turns the reason the resolver registered into the last
// message: the protocol's error message on websockets, a last event with
// the error on SSE (graphql-sse has no error event), then completion.

type streamEndKey struct{}

// streamEnd is where a subscription resolver leaves why its stream ended.
type streamEnd struct{ reason func() error }

// OnStreamEnd registers, for the current subscription, the function that
// says why its channel was closed (nil: the client went away).
func OnStreamEnd(ctx context.Context, reason func() error) {
	if e, ok := ctx.Value(streamEndKey{}).(*streamEnd); ok {
		e.reason = reason
	}
}

type websocketKey struct{}

// WithWebsocket marks the context of a websocket connection: a
// subscription on it that ends on its own says why with the protocol's
// error message rather than a last event.
func WithWebsocket(ctx context.Context) context.Context {
	return context.WithValue(ctx, websocketKey{}, true)
}

// EndStreams is an operation middleware: see above.
func EndStreams(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc == nil || oc.Operation == nil || oc.Operation.Operation != ast.Subscription {
		return next(ctx)
	}
	e := &streamEnd{}
	responses := next(context.WithValue(ctx, streamEndKey{}, e))
	done := false
	return func(ctx context.Context) *graphql.Response {
		if resp := responses(ctx); resp != nil || done {
			return resp
		}
		done = true
		if e.reason == nil || ctx.Err() != nil {
			return nil
		}
		err := e.reason()
		if err == nil {
			return nil
		}
		gerr := Present(ctx, err)
		if ctx.Value(websocketKey{}) != nil {
			transport.AddSubscriptionError(ctx, gerr)
			return nil
		}
		return &graphql.Response{Errors: gqlerror.List{gerr}}
	}
}
