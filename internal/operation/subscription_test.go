package operation_test

import (
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// TestOneSubscriptionField: a subscription selecting one root field twice
// under two aliases passes gqlparser's validation (its rule compares
// names, not response keys); the rules must refuse it as a validation
// error rather than let execution fail it as an internal error, which is
// logged. Anonymous, so that a document let through ends at once with
// UNAUTHENTICATED.
func TestOneSubscriptionField(t *testing.T) {
	s := gatewaytest.New(t)
	tests := []struct {
		name string
		doc  string
		vars map[string]any
		want string
	}{
		{"one field", `subscription { notificationAdded { id } }`, nil, "UNAUTHENTICATED"},
		{"two aliases of one field", `subscription { a: notificationAdded { id } b: notificationAdded { id } }`, nil, "GRAPHQL_VALIDATION_FAILED"},
		{"aliases through a fragment", `subscription { a: timelineUpdated { id } ...F } fragment F on Subscription { b: timelineUpdated { id } }`, nil, "GRAPHQL_VALIDATION_FAILED"},
		{"the same key twice", `subscription { notificationAdded { id } notificationAdded { id } }`, nil, "UNAUTHENTICATED"},
		{"the second one left out", `subscription($x: Boolean!) { a: notificationAdded { id } b: notificationAdded @include(if: $x) { id } }`, map[string]any{"x": false}, "UNAUTHENTICATED"},
		{"the second one included", `subscription($x: Boolean!) { a: notificationAdded { id } b: notificationAdded @include(if: $x) { id } }`, map[string]any{"x": true}, "GRAPHQL_VALIDATION_FAILED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := s.Do(t, "", tt.doc, tt.vars)
			if got := res.Code(); got != tt.want {
				t.Errorf("code %s, want %s (%+v)", got, tt.want, res)
			}
		})
	}
}
