package graph

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// writeResponse writes what gqlgen's transport writes (json.Marshal of
// the response), but for the HTML escaping encoding/json adds.
func TestWriteResponse(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name string
		resp graphql.Response
		want string // "": as json.Marshal
	}{
		{"data", graphql.Response{Data: json.RawMessage(`{"me":{"id":"1","name":"a<b"}}`)}, `{"data":{"me":{"id":"1","name":"a<b"}}}`},
		{"null data", graphql.Response{}, `{"data":null}`},
		{"empty extensions", graphql.Response{Data: json.RawMessage(`{"a":1}`), Extensions: map[string]any{}, Path: ast.Path{}}, `{"data":{"a":1}}`},
		{"errors", graphql.Response{Data: json.RawMessage(`null`), Errors: gqlerror.List{{Message: "no", Path: ast.Path{ast.PathName("me")}}}}, ""},
		{"extensions", graphql.Response{Data: json.RawMessage(`{"a":1}`), Extensions: map[string]any{"cost": 3}}, ""},
		{"incremental", graphql.Response{Data: json.RawMessage(`{"a":1}`), Label: "l", Path: ast.Path{ast.PathIndex(0)}, HasNext: &yes}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			writeResponse(&b, &tc.resp)
			want := tc.want
			if want == "" {
				m, err := json.Marshal(&tc.resp)
				if err != nil {
					t.Fatal(err)
				}
				want = string(m)
			}
			if b.String() != want {
				t.Errorf("wrote %s\nwant %s", b.String(), want)
			}
			if !json.Valid(b.Bytes()) {
				t.Errorf("not JSON: %s", b.String())
			}
		})
	}
}

// A subscription over plain POST that ends before its first event has no
// response: null, as gqlgen's transport writes it.
func TestWriteNoResponse(t *testing.T) {
	var b bytes.Buffer
	writeResponse(&b, nil)
	if b.String() != "null" {
		t.Errorf("wrote %q", b.String())
	}
}

func TestResponseContentType(t *testing.T) {
	for _, tc := range []struct{ accept, want string }{
		{"", "application/json"},
		{"*/*", "application/json"},
		{"application/*", "application/json"},
		{"application/json", "application/json"},
		{"application/graphql-response+json", graphqlResponseJSON},
		{"application/graphql-response+json, application/json;q=0.9", graphqlResponseJSON},
		{"text/html, application/json", "application/json"},
		{"text/html", graphqlResponseJSON},
		{"bad;;;, application/json", "application/json"},
	} {
		if got := responseContentType(tc.accept); got != tc.want {
			t.Errorf("Accept %q: %s, want %s", tc.accept, got, tc.want)
		}
	}
}
