package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// writeResponse writes what gqlgen's transport writes: json.Marshal of
// the response, HTML escaping included.
func TestWriteResponse(t *testing.T) {
	yes := true
	for _, tc := range []struct {
		name string
		resp graphql.Response
		want string // "": as json.Marshal
	}{
		{"data", graphql.Response{Data: json.RawMessage(`{"me":{"id":"1","name":"ab"}}`)}, `{"data":{"me":{"id":"1","name":"ab"}}}`},
		{"markup in data", graphql.Response{Data: json.RawMessage(`{"content":"<script>a && b</script> \u003c"}`)}, ""},
		{"line separators in data", graphql.Response{Data: json.RawMessage("{\"content\":\"a\u2028b\u2029c – 微博 🎉\"}")}, ""},
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

// BenchmarkWriteResponse: what writing a reference-sized response (25 KB
// of data) costs, with nothing to escape and with markup in it, against
// gqlgen's json.Marshal.
func BenchmarkWriteResponse(b *testing.B) {
	post := `{"node":{"id":"12345","content":"a post of the reference page, of ordinary length and words","createdAt":"2026-11-24T10:00:00.000Z","likesCount":3,"author":{"id":"42","name":"someone"}}},`
	plain := []byte(`{"timeline":{"edges":[` + strings.Repeat(post, 25000/len(post)) + `{}]}}`)
	markup := bytes.Replace(plain, []byte("ordinary"), []byte("<b>ordinary</b> & so"), -1)
	for _, bc := range []struct {
		name string
		data []byte
	}{{"plain", plain}, {"markup", markup}} {
		resp := &graphql.Response{Data: bc.data}
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.data)))
			for b.Loop() {
				writeResponse(io.Discard, resp)
			}
		})
		b.Run(bc.name+"/json.Marshal", func(b *testing.B) {
			b.SetBytes(int64(len(bc.data)))
			for b.Loop() {
				out, _ := json.Marshal(resp)
				_, _ = io.Discard.Write(out)
			}
		})
	}
}
