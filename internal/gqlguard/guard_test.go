package gqlguard_test

import (
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/gqlguard/hostile"
)

func model(t testing.TB) gqlguard.Model {
	t.Helper()
	src, err := os.ReadFile("../../schema.graphql")
	if err != nil {
		t.Fatal(err)
	}
	return gqlguard.Model{
		Schema:             gqlparser.MustLoadSchema(&ast.Source{Name: "schema.graphql", Input: string(src)}),
		PageArg:            "first",
		MaxPage:            100,
		ListSizes:          map[string]int{"Post.onlyTo": 1000},
		DefaultListSize:    50,
		StringBytes:        map[string]int{"Post.content": 3000},
		DefaultStringBytes: 100,
	}
}

// reference is the reference timeline query (graph/reference.graphql).
func reference(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile("../../graph/reference.graphql")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestReport(t *testing.T) {
	g := gqlguard.New(gqlguard.Limits{}, model(t))
	tests := []struct {
		name string
		doc  string
		op   string
		vars map[string]any
		want gqlguard.Report
	}{
		{"one field", `{ me { id } }`, "", nil,
			gqlguard.Report{Tokens: 6, Fields: 2, Depth: 2, Cost: 2, ResponseBytes: 6 + 8 + 22, Operation: ast.Query}},
		{"alias and directive", `{ a: me @include(if: true) { id } }`, "", nil,
			gqlguard.Report{Tokens: 15, Fields: 2, Depth: 2, Aliases: 1, Directives: 1, Cost: 2, ResponseBytes: 5 + 8 + 22, Operation: ast.Query}},
		{"page from a literal", `{ timeline(first: 5) { edges { node { id } } } }`, "", nil,
			gqlguard.Report{Tokens: 17, Fields: 4, Depth: 4, Cost: 1 + 5*3,
				// "timeline":{"edges":[5 × ({"node":{"id":…}} + ,)]}
				ResponseBytes: 12 + 2 + 9 + 2 + 5*(2+8+2+6+22+1), Operation: ast.Query}},
		{"page from a variable", `query($n: Int) { timeline(first: $n) { edges { node { id } } } }`, "", map[string]any{"n": 7},
			gqlguard.Report{Tokens: 25, Fields: 4, Depth: 4, Cost: 1 + 7*3, ResponseBytes: 12 + 2 + 9 + 2 + 7*(2+8+2+6+22+1), Operation: ast.Query}},
		{"out-of-range page counts as the default", `{ timeline(first: 5000) { edges { node { id } } } }`, "", nil,
			gqlguard.Report{Tokens: 17, Fields: 4, Depth: 4, Cost: 1 + 20*3, ResponseBytes: 12 + 2 + 9 + 2 + 20*(2+8+2+6+22+1), Operation: ast.Query}},
		{"absent page counts as the default", `{ timeline { pageInfo { hasNextPage } } }`, "", nil,
			// the page multiplies the edges' size, and there are none.
			gqlguard.Report{Tokens: 9, Fields: 3, Depth: 3, Cost: 1 + 20*2, ResponseBytes: 12 + 2 + 12 + 2 + 15 + 5, Operation: ast.Query}},
		{"unpaged list counts its bound", `{ post(id: "1") { onlyTo { id } } }`, "", nil,
			gqlguard.Report{Tokens: 14, Fields: 3, Depth: 3, Cost: 1 + 1 + 1000, ResponseBytes: 8 + 2 + 10 + 2 + 1000*(1+2+6+22), Operation: ast.Query}},
		{"long strings cost their length", `{ post(id: "1") { content } }`, "", nil,
			gqlguard.Report{Tokens: 11, Fields: 2, Depth: 2, Cost: 2, ResponseBytes: 8 + 2 + 11 + 3002, Operation: ast.Query}},
		{"fragments expand", `{ me { ...A ...A } } fragment A on User { id name }`, "", nil,
			gqlguard.Report{Tokens: 17, Fields: 5, Depth: 2, Cost: 5, ResponseBytes: 6 + 2 + 2*(6+22) + 2*(8+102), Operation: ast.Query}},
		{"inline fragment directives count", `{ me { ... on User @skip(if: false) { id } } }`, "", nil,
			gqlguard.Report{Tokens: 18, Fields: 2, Depth: 2, Directives: 1, Cost: 2, ResponseBytes: 6 + 2 + 6 + 22, Operation: ast.Query}},
		{"the selected operation's cost", `query A { me { id } } mutation B { logout }`, "B", nil,
			gqlguard.Report{Tokens: 13, Fields: 3, Depth: 2, Cost: 1, ResponseBytes: 10 + 5, Operation: ast.Mutation}},
		{"no operation selected", `query A { me { id } } query B { me { id } }`, "", nil,
			gqlguard.Report{Tokens: 16, Fields: 4, Depth: 2}},
		{"unused fragments count", `{ me { id } } fragment A on User { name bio }`, "", nil,
			gqlguard.Report{Tokens: 14, Fields: 4, Depth: 2, Cost: 2, ResponseBytes: 6 + 8 + 22, Operation: ast.Query}},
		{"the reference query", reference(t), "", nil,
			// gqlgen's complexity: 1 + 20 × (edges 1 + cursor 1 + node 38 + pageInfo 3)
			gqlguard.Report{Tokens: 66, Fields: 30, Depth: 8, Cost: 1 + 20*(1+1+38+3), ResponseBytes: 152394, Operation: ast.Query}},
	}
	// The same guard reading documents parsed before (gqlgen's cache)
	// measures the same, but for the tokens, which it does not count.
	cached := gqlguard.New(gqlguard.Limits{}, model(t))
	lookups := 0
	cached.UseParsed(func(q string) (*ast.QueryDocument, bool) {
		lookups++
		doc, err := parser.ParseQuery(&ast.Source{Input: q})
		return doc, err == nil
	})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := g.Check(tt.doc, tt.op, tt.vars)
			if err != nil {
				t.Fatalf("Check: %v", err)
			}
			if got != tt.want {
				t.Errorf("Check:\n got %+v\nwant %+v", got, tt.want)
			}
			before := lookups
			got, err = cached.Check(tt.doc, tt.op, tt.vars)
			want := tt.want
			want.Tokens = 0
			if err != nil || got != want || lookups != before+1 {
				t.Errorf("Check of a parsed document (%d lookups): %v\n got %+v\nwant %+v", lookups-before, err, got, want)
			}
		})
	}
}

func TestLimits(t *testing.T) {
	tests := []struct {
		name   string
		limits gqlguard.Limits
		doc    string
		code   string
		msg    string
	}{
		{"tokens", gqlguard.Limits{Tokens: 5}, `{ me { id } }`, "GRAPHQL_VALIDATION_FAILED", "more than 5 tokens"},
		{"tokens at the limit", gqlguard.Limits{Tokens: 6}, `{ me { id } }`, "", ""},
		{"fields", gqlguard.Limits{Fields: 3}, `{ me { id name bio } }`, "GRAPHQL_VALIDATION_FAILED", "more than 3 fields"},
		{"fields through fragments", gqlguard.Limits{Fields: 3}, `{ me { ...A ...A } } fragment A on User { id }`, "", ""},
		{"fields through fragments over", gqlguard.Limits{Fields: 2}, `{ me { ...A ...A } } fragment A on User { id }`, "GRAPHQL_VALIDATION_FAILED", "more than 2 fields"},
		{"depth", gqlguard.Limits{Depth: 1}, `{ me { id } }`, "GRAPHQL_VALIDATION_FAILED", "deeper than 1 levels"},
		{"depth through a fragment", gqlguard.Limits{Depth: 2}, `{ me { ...A } } fragment A on User { posts { pageInfo { hasNextPage } } }`, "GRAPHQL_VALIDATION_FAILED", "deeper than 2"},
		{"aliases", gqlguard.Limits{Aliases: 1}, `{ a: me { id } b: me { id } }`, "GRAPHQL_VALIDATION_FAILED", "more than 1 aliases"},
		{"an alias equal to the name is none", gqlguard.Limits{Aliases: 1}, `{ me: me { id } b: me { id } }`, "", ""},
		{"directives", gqlguard.Limits{Directives: 1}, `{ me @skip(if: false) { id @skip(if: false) } }`, "GRAPHQL_VALIDATION_FAILED", "more than 1 directives"},
		{"cost", gqlguard.Limits{Cost: 10}, `{ timeline(first: 5) { edges { node { id } } } }`, "COMPLEXITY_LIMIT_EXCEEDED", "complexity 16, which exceeds the limit of 10"},
		{"response size", gqlguard.Limits{ResponseBytes: 10000}, `{ timeline(first: 5) { edges { node { content } } } }`, "COMPLEXITY_LIMIT_EXCEEDED", "the response could reach 15"},
		{"syntax", gqlguard.Limits{}, `{ me { id }`, "GRAPHQL_PARSE_FAILED", "Expected Name"},
		{"lexer", gqlguard.Limits{}, `{ me { id } } "unterminated`, "GRAPHQL_PARSE_FAILED", "Unterminated string"},
		{"cycle", gqlguard.Limits{}, hostile.FragmentCycle(), "GRAPHQL_VALIDATION_FAILED", `spread fragment "A" within itself`},
		{"self spread", gqlguard.Limits{}, `{ me { ...A } } fragment A on User { ...A }`, "GRAPHQL_VALIDATION_FAILED", "within itself"},
		{"unknown fragment is left to validation", gqlguard.Limits{Fields: 5}, `{ me { ...Nope } }`, "", ""},
		{"unknown field is left to validation", gqlguard.Limits{Fields: 5}, `{ nope { id } }`, "", ""},
		{"cost saturates instead of overflowing", gqlguard.Limits{Cost: math.MaxInt}, "{ me " + strings.Repeat("{ followers(first: 100) { edges { node ", 12) + "{ id }" + strings.Repeat(" } } }", 12) + " }", "COMPLEXITY_LIMIT_EXCEEDED", "over 1125899906842624"},
		{"exponential fragments count without expanding", gqlguard.Limits{Fields: 1000}, hostile.ExponentialFragments(60), "GRAPHQL_VALIDATION_FAILED", "more than 1000 fields"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := gqlguard.New(tt.limits, model(t)).Check(tt.doc, "", nil)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Check passed, want %s", tt.code)
			}
			if got := err.Extensions["code"]; got != tt.code {
				t.Errorf("code %v, want %s (%v)", got, tt.code, err)
			}
			if !strings.Contains(err.Message, tt.msg) {
				t.Errorf("message %q, want it to contain %q", err.Message, tt.msg)
			}
		})
	}
}

// TestHostileDocumentsAreCheap checks every hostile document against the
// default limits in a bounded time: the guard's own walk never expands.
func TestHostileDocumentsAreCheap(t *testing.T) {
	g := gqlguard.New(gqlguard.DefaultLimits(20000), model(t))
	for _, c := range hostile.Classes() {
		t.Run(c.Name, func(t *testing.T) {
			start := time.Now()
			_, err := g.Check(c.Doc, "", nil)
			// Generous for a busy 2-core machine; the measured figure is
			// in docs/performance.md.
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("Check took %v", d)
			}
			switch {
			case c.Code == "" && err != nil:
				t.Errorf("Check: %v, want it to pass", err)
			case c.Code != "" && (err == nil || err.Extensions["code"] != c.Code):
				t.Errorf("Check: %v, want code %s", err, c.Code)
			}
		})
	}
}

// TestDefaultsPass checks the documents the limits must never refuse:
// the reference query and the introspection query of GraphiQL and
// graphql-js (getIntrospectionQuery with every option).
func TestDefaultsPass(t *testing.T) {
	introspection, err := os.ReadFile("testdata/introspection.graphql")
	if err != nil {
		t.Fatal(err)
	}
	for name, doc := range map[string]string{"reference": reference(t), "introspection": string(introspection)} {
		t.Run(name, func(t *testing.T) {
			r, err := gqlguard.New(gqlguard.DefaultLimits(20000), model(t)).Check(doc, "", nil)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", r)
		})
	}
}
