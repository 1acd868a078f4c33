package operation_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// TestValidationErrorsBounded: a document within the document limits
// whose fields conflict pairwise must not be answered with every pair
// (150 copies: 11 175 errors, 2.7 MB from 3.8 KB), and a document with a
// few errors still gets each of them.
func TestValidationErrorsBounded(t *testing.T) {
	s := gatewaytest.New(t)
	copies := func(n int) string {
		var b strings.Builder
		b.WriteString("{ ")
		for i := range n {
			fmt.Fprintf(&b, `user(name: "n%d") { id } `, i)
		}
		return b.String() + "}"
	}
	for _, tc := range []struct {
		name     string
		doc      string
		min, max int
	}{
		{"three conflicting copies", copies(3), 3, 3},
		{"150 conflicting copies", copies(150), 1, 100},
		{"unknown fields", "{ a b c }", 3, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := s.Do(t, "", tc.doc, nil)
			if res.Code() != "GRAPHQL_VALIDATION_FAILED" || len(res.Errors) < tc.min || len(res.Errors) > tc.max {
				t.Errorf("code %s, %d errors; want GRAPHQL_VALIDATION_FAILED, %d to %d", res.Code(), len(res.Errors), tc.min, tc.max)
			}
		})
	}
}
