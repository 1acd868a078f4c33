package operation

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// oneSubscriptionField refuses, as a validation error, a subscription
// whose root selects more than one field once aliases are counted
// (`a: notificationAdded b: notificationAdded`). gqlparser's
// SingleFieldSubscriptions rule compares field names, not response
// keys, so such a document passes validation, and gqlgen's execution
// then fails it with an internal error, logged: any client could fill
// the error log. The fields are collected as gqlgen's execution does
// (aliases, fragments, @skip and @include with the variables).
type oneSubscriptionField struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = oneSubscriptionField{}

func (oneSubscriptionField) ExtensionName() string                   { return "OneSubscriptionField" }
func (oneSubscriptionField) Validate(graphql.ExecutableSchema) error { return nil }
func (oneSubscriptionField) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || oc.Operation.Operation != ast.Subscription {
		return nil
	}
	if len(graphql.CollectFields(oc, oc.Operation.SelectionSet, []string{"Subscription"})) > 1 {
		err := gqlerror.Errorf("a subscription must select exactly one root field")
		err.Extensions = map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}
		return err
	}
	return nil
}
