package operation

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// noIntrospection refuses, when introspection is off, a document that
// asks for it (__schema or __type), as a validation error: gqlgen would
// run it and fail each such field with an internal error, logged.
type noIntrospection struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = noIntrospection{}

func (noIntrospection) ExtensionName() string                   { return "NoIntrospection" }
func (noIntrospection) Validate(graphql.ExecutableSchema) error { return nil }
func (noIntrospection) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return nil
	}
	// The document's own selection set lives as long as the operation:
	// safe to hand to gqlgen's cache of collected fields (graph/readpath/selection.go).
	for _, f := range graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Query"}) {
		if f.Name == "__schema" || f.Name == "__type" {
			err := gqlerror.Errorf("introspection is disabled on this server")
			err.Extensions = map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}
			return err
		}
	}
	return nil
}
