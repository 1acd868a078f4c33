package graph

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestFastPathCoversSchema holds the fast path's renderer against the
// executable schema: every field of every type it renders is either
// rendered or listed as a fallback, every field it renders exists, and the
// fields it renders declare no argument or directive it does not read. A
// field or argument added to the schema fails here until the fast path is
// taught it or told to leave it to the ordinary path.
func TestFastPathCoversSchema(t *testing.T) {
	schema := NewExecutableSchema(Config{}).Schema()
	for typ, fields := range fastFields {
		def := schema.Types[graphqlType(typ)]
		if def == nil {
			t.Errorf("the fast path renders type %s, which the schema lacks", graphqlType(typ))
			continue
		}
		for _, f := range def.Fields {
			if strings.HasPrefix(f.Name, "__") {
				continue
			}
			_, rendered := fields[f.Name]
			fallback := slices.Contains(fastFallbacks[typ], f.Name)
			switch {
			case rendered && fallback:
				t.Errorf("%s.%s is both rendered and a fallback", typ, f.Name)
			case !rendered && !fallback:
				t.Errorf("%s.%s is neither rendered by the fast path nor listed in fastFallbacks", typ, f.Name)
			case rendered:
				for _, a := range f.Arguments {
					if !slices.Contains(fastArgs[graphqlType(typ)][f.Name], a.Name) {
						t.Errorf("%s.%s has argument %s, which the fast path does not read", typ, f.Name, a.Name)
					}
				}
				for _, d := range f.Directives {
					if d.Name != "deprecated" {
						t.Errorf("%s.%s has directive @%s, which the fast path does not apply", typ, f.Name, d.Name)
					}
				}
			}
		}
		for name := range fields {
			if def.Fields.ForName(name) == nil {
				t.Errorf("the fast path renders %s.%s, which the schema lacks", typ, name)
			}
		}
		for _, name := range fastFallbacks[typ] {
			if def.Fields.ForName(name) == nil {
				t.Errorf("fastFallbacks lists %s.%s, which the schema lacks", typ, name)
			}
		}
	}
	for _, root := range []string{"timeline", "userTimeline"} {
		f := schema.Query.Fields.ForName(root)
		for _, a := range f.Arguments {
			if !slices.Contains(fastArgs["Query"][root], a.Name) {
				t.Errorf("Query.%s has argument %s, which the fast path does not read", root, a.Name)
			}
		}
	}
}

// TestFastPathDeclinesWhatItDoesNotRead checks, against schemas that grow
// an argument or a directive on a field the fast path renders, that it
// declines before fetching, with the reason the metric reports.
func TestFastPathDeclinesWhatItDoesNotRead(t *testing.T) {
	src, err := os.ReadFile("../schema.graphql")
	if err != nil {
		t.Fatal(err)
	}
	base := string(src)
	post := "type Post {\n  id: ID!\n  author: User!\n  content: String!"
	if !strings.Contains(base, post) {
		t.Fatal("schema.graphql changed: update the test's anchor")
	}
	cases := []struct {
		name, schema, query string
		ok                  bool
		reason              FallbackReason
	}{
		{"plain", base, `{ timeline { edges { node { content author { name } } } } }`, true, 0},
		{"argument with a default", strings.Replace(base, post, strings.Replace(post, "content: String!", "content(maxLength: Int = 100): String!", 1), 1),
			`{ timeline { edges { node { content } } } }`, false, FallbackArgument},
		{"argument passed", strings.Replace(base, post, strings.Replace(post, "content: String!", "content(maxLength: Int): String!", 1), 1),
			`{ timeline { edges { node { id content(maxLength: 3) } } } }`, false, FallbackArgument},
		{"schema directive", "directive @upper on FIELD_DEFINITION\n" + strings.Replace(base, post, strings.Replace(post, "content: String!", "content: String! @upper", 1), 1),
			`{ timeline { edges { node { content } } } }`, false, FallbackDirective},
		{"query directive", "directive @trace on FIELD\n" + base,
			`{ timeline { edges { node { content @trace } } } }`, false, FallbackDirective},
		{"query directive on the root field", "directive @trace on FIELD\n" + base,
			`{ timeline @trace { edges { node { content } } } }`, false, FallbackDirective},
		{"skip and include", base, `{ timeline { edges { node { content @skip(if: true) id @include(if: false) } } } }`, true, 0},
		{"unknown field", base, `{ timeline { edges { node { likers { totalCount } } } } }`, false, FallbackField},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			schema, gerr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphql", Input: tc.schema})
			if gerr != nil {
				t.Fatal(gerr)
			}
			doc, errs := gqlparser.LoadQuery(schema, tc.query)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			oc := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0], Variables: map[string]any{}}
			root := graphql.CollectFields(oc, doc.Operations[0].SelectionSet, []string{"Query"})[0]
			reason, ok := fastField(root, "Query")
			if ok {
				reason, ok = fastSupported(oc, root.Selections, "Timeline")
			}
			if ok != tc.ok || (!ok && reason != tc.reason) {
				t.Fatalf("fast path: ok %v reason %s, want ok %v reason %s", ok, FallbackReasons[reason], tc.ok, FallbackReasons[tc.reason])
			}
		})
	}
}
