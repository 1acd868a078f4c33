package tracing

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Operations is the gqlgen extension that gives each GraphQL operation a
// span, named by its type and name ("query HomeTimeline"), on every
// transport. The resolvers, and so their Redis flights, run in its
// context. A query's or mutation's span ends with its response; a
// subscription's covers its start (authorisation, replay set-up), not the
// hours it may stay open.
type Operations struct{ tracer trace.Tracer }

// NewOperations returns the extension, making spans with tp.
func NewOperations(tp trace.TracerProvider) Operations {
	return Operations{tracer: tp.Tracer(Name)}
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationInterceptor
} = Operations{}

func (Operations) ExtensionName() string                   { return "Tracing" }
func (Operations) Validate(graphql.ExecutableSchema) error { return nil }

func (o Operations) InterceptOperation(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	kind, opName := "query", oc.OperationName
	if oc.Operation != nil {
		kind, opName = string(oc.Operation.Operation), oc.Operation.Name
	}
	name := kind
	if opName != "" {
		name += " " + opName
	}
	ctx, span := o.tracer.Start(ctx, name, trace.WithAttributes(
		attribute.String("graphql.operation.type", kind),
		attribute.String("graphql.operation.name", opName),
	))
	h := next(ctx)
	if kind == "subscription" {
		span.End()
		return h
	}
	done := false
	return func(ctx context.Context) *graphql.Response {
		resp := h(ctx)
		if !done {
			done = true
			if resp != nil && len(resp.Errors) > 0 {
				span.SetStatus(codes.Error, resp.Errors[0].Message)
			}
			span.End()
		}
		return resp
	}
}
