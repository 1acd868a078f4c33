package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/operation"
)

// measure owns what each method may carry, and passes the verdict on.
func TestMeasure(t *testing.T) {
	rules := operation.New(graph.NewExecution(&graph.Resolver{}, nil, graph.ExecOptions{}).Schema,
		operation.Options{Limits: gqlguard.DefaultLimits(20000)})
	for _, tc := range []struct {
		name, method, query string
		accept              string
		upload              bool
		status              int // 0: passed on
		allow               string
	}{
		{"GET query", "GET", "{ __typename }", "", false, 0, ""},
		{"GET mutation", "GET", "mutation { logout }", "", false, 405, "POST"},
		{"GET subscription", "GET", "subscription { timelineUpdated { id } }", "", false, 405, "POST"},
		{"GET mutation the guard refuses", "GET", "mutation { logout ", "", false, 0, ""},
		{"POST mutation", "POST", "mutation { logout }", "", false, 0, ""},
		{"multipart mutation", "POST", "mutation { logout }", "", true, 0, ""},
		{"multipart query", "POST", "{ __typename }", "", true, 400, ""},
		{"POST subscription over SSE", "POST", "subscription { timelineUpdated { id } }", "text/event-stream", false, 0, ""},
		{"POST subscription without SSE", "POST", "subscription { timelineUpdated { id } }", "application/json", false, 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newParams(&graphql.RawParams{Query: tc.query})
			if tc.upload {
				p.upload = &multipartBody{}
			}
			r := httptest.NewRequest(tc.method, "/query", nil)
			r.Header.Set("Accept", tc.accept)
			r = r.WithContext(withParams(r.Context(), p))
			next, w := &ok{}, httptest.NewRecorder()
			measure(rules)(next).ServeHTTP(w, r)
			if tc.status == 0 {
				if !next.ran || operation.VerdictFrom(next.r.Context()) == nil {
					t.Fatalf("status %d (%s): not passed on with a verdict", w.Code, w.Body)
				}
				return
			}
			if next.ran || w.Code != tc.status || !strings.Contains(w.Body.String(), `"BAD_USER_INPUT"`) || w.Header().Get("Allow") != tc.allow {
				t.Errorf("ran %v, status %d, Allow %q (%s); want %d, Allow %q", next.ran, w.Code, w.Header().Get("Allow"), w.Body, tc.status, tc.allow)
			}
		})
	}
}
