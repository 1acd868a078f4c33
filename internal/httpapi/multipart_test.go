package httpapi

import (
	"net/http/httptest"
	"testing"

	"github.com/99designs/gqlgen/graphql"
)

func TestCheckUploader(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header map[string]string
		status int // 0: allowed
	}{
		{"preflight header and token", map[string]string{"GraphQL-Require-Preflight": "1", "Authorization": "Bearer good"}, 0},
		{"Apollo's header", map[string]string{"Apollo-Require-Preflight": "true", "Authorization": "Bearer good"}, 0},
		{"no preflight header", map[string]string{"Authorization": "Bearer good"}, 400},
		{"an empty preflight header", map[string]string{"GraphQL-Require-Preflight": " ", "Authorization": "Bearer good"}, 400},
		{"no token", map[string]string{"GraphQL-Require-Preflight": "1"}, 401},
		{"a bad token", map[string]string{"GraphQL-Require-Preflight": "1", "Authorization": "Bearer bad"}, 401},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/query", nil)
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			f := checkUploader(r, authOf{})
			if (f == nil) != (tc.status == 0) || (f != nil && f.status != tc.status) {
				t.Errorf("refusal %+v, want status %d", f, tc.status)
			}
		})
	}
}

func TestSetPath(t *testing.T) {
	up := graphql.Upload{Filename: "a.png"}
	for _, tc := range []struct {
		name, path string
		ok         bool
	}{
		{"a variable", "variables.file", true},
		{"in an object", "variables.i.file", true},
		{"in a list", "variables.i.media.1.file", true},
		{"not null", "variables.i.content", false},
		{"absent", "variables.nope", false},
		{"out of the list", "variables.i.media.2.file", false},
		{"not the variables", "operations.file", false},
		{"the variables themselves", "variables", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vars := map[string]any{"file": nil, "i": map[string]any{"content": "x", "file": nil,
				"media": []any{map[string]any{"file": nil}, map[string]any{"file": nil}}}}
			err := setPath(vars, tc.path, up)
			if (err == nil) != tc.ok {
				t.Errorf("err %v, want ok %v", err, tc.ok)
			}
		})
	}
}
