package readpath

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// TestFieldsCoverSchema holds the read path's field rules (fields.go)
// against the executable schema: every field of every type they describe
// has a rule, and every rule names a field; a rendered field declares no
// argument or directive the fast path does not read; every type the fast
// path reaches is described. A field or argument added to the schema fails
// here until its rule says what the read path reads for it and whether the
// fast path renders it.
func TestFieldsCoverSchema(t *testing.T) {
	for _, p := range ruleProblems(parseSchema(t, readSchema(t))) {
		t.Error(p)
	}
}

// schemaFile is the schema the executable schema (graph) is generated
// from.
const schemaFile = "../../schema.graphql"

// readSchema returns the source of schemaFile.
func readSchema(t *testing.T) string {
	t.Helper()
	src, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	return string(src)
}

// parseSchema parses a schema as gqlgen's executable schema does, with
// the built-in types and directives.
func parseSchema(t *testing.T, src string) *ast.Schema {
	t.Helper()
	schema, gerr := gqlparser.LoadSchema(&ast.Source{Name: "schema.graphql", Input: src})
	if gerr != nil {
		t.Fatal(gerr)
	}
	return schema
}

// TestFieldsCoverSchemaFails checks that the coverage test sees schema
// changes the rules do not follow.
func TestFieldsCoverSchemaFails(t *testing.T) {
	base := readSchema(t)
	cases := []struct{ name, from, to, want string }{
		{"a new Post field", "type Post {\n  id: ID!", "type Post {\n  id: ID!\n  starred: Boolean!", "Post.starred has no rule"},
		{"a new User field", "type User {\n  id: ID!", "type User {\n  id: ID!\n  website: String", "User.website has no rule"},
		{"a field renamed", "platform).\"\n  source: String\n", "platform).\"\n  sources: [String!]\n", "Post.source, which the schema lacks"},
		{"an argument on a rendered field", "  content: String!\n", "  content(max: Int): String!\n", "Post.content has argument max"},
		{"a new connection field", "type CommentEdge {\n", "type CommentEdge {\n  rank: Int\n", "CommentEdge.rank"},
		{"a new root argument", "userTimeline(userId: ID!,", "userTimeline(userId: ID!, pinned: Boolean,", "Query.userTimeline has argument pinned"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if !strings.Contains(base, tc.from) {
				t.Fatalf("schema.graphql changed: update the case's anchor %q", tc.from)
			}
			problems := ruleProblems(parseSchema(t, strings.Replace(base, tc.from, tc.to, 1)))
			if !slices.ContainsFunc(problems, func(p string) bool { return strings.Contains(p, tc.want) }) {
				t.Fatalf("problems %q, want one saying %q", problems, tc.want)
			}
		})
	}
}

// ruleProblems lists where the field rules and schema disagree.
func ruleProblems(schema *ast.Schema) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for typ, rules := range fieldRules {
		def := schema.Types[typ]
		if def == nil {
			add("fields.go has rules for type %s, which the schema lacks", typ)
			continue
		}
		for _, f := range def.Fields {
			if r, ok := rules[f.Name]; ok {
				out = append(out, ruleProblem(schema, typ, f, r)...)
			} else if !strings.HasPrefix(f.Name, "__") {
				add("%s.%s has no rule in fields.go: say what the read path reads for it and whether the fast path renders it", typ, f.Name)
			}
		}
		for name := range rules {
			if def.Fields.ForName(name) == nil {
				add("fields.go has a rule for %s.%s, which the schema lacks", typ, name)
			}
		}
	}
	for typ, names := range connectionFields {
		def := schema.Types[typ]
		if def == nil {
			add("connectionFields lists type %s, which the schema lacks", typ)
			continue
		}
		for _, f := range def.Fields {
			if !strings.HasPrefix(f.Name, "__") && (!slices.Contains(names, f.Name) || len(f.Arguments) > 0) {
				add("the fast path does not render %s.%s (connectionFields)", typ, f.Name)
			}
		}
		for _, name := range names {
			if def.Fields.ForName(name) == nil {
				add("connectionFields lists %s.%s, which the schema lacks", typ, name)
			}
		}
	}
	for root, args := range fastRoots {
		if f := schema.Query.Fields.ForName(root); f == nil {
			add("fastRoots lists Query.%s, which the schema lacks", root)
		} else {
			out = append(out, argProblems("Query."+root, f, args)...)
		}
	}
	return append(out, reachProblems(schema)...)
}

// renderTypes check a render's type against the Go type of the objects of
// each described type.
var renderTypes = map[string]func(any) bool{
	"Post":    func(r any) bool { _, ok := r.(render[*social.Post]); return ok },
	"User":    func(r any) bool { _, ok := r.(render[*social.User]); return ok },
	"Comment": func(r any) bool { _, ok := r.(render[*social.Comment]); return ok },
	"Media":   func(r any) bool { _, ok := r.(render[*model.Media]); return ok },
}

// ruleProblem checks one field's rule against its definition.
func ruleProblem(schema *ast.Schema, typ string, f *ast.FieldDefinition, r fieldRule) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	name := typ + "." + f.Name
	value := schema.Types[f.Type.Name()]
	switch {
	case r.render == nil && len(r.args) > 0:
		add("%s lists arguments the fast path reads, but the fast path does not render it", name)
	case r.render != nil && !renderTypes[typ](r.render):
		add("%s's render is not a render of %s", name, typ)
	case r.render != nil:
		out = append(out, argProblems(name, f, r.args)...)
	}
	if (r.page != nil || r.topOnly || r.original) && typ != "Post" {
		add("%s: page wants are for Post fields", name)
	}
	if r.user != (readplan.UserWants{}) && typ != "User" {
		add("%s: user wants are for User fields", name)
	}
	if (r.list != "" || r.posts) && (value == nil || value.Fields.ForName("edges") == nil) {
		add("%s is read ahead as a list but is not a connection", name)
	}
	if r.reach != nil && fieldRules[f.Type.Name()] == nil {
		add("%s is followed by the read-ahead to %s, which has no rules", name, f.Type.Name())
	}
	return out
}

// argProblems checks a field's arguments and directives against those the
// fast path reads.
func argProblems(name string, f *ast.FieldDefinition, args []string) []string {
	var out []string
	for _, a := range f.Arguments {
		if !slices.Contains(args, a.Name) {
			out = append(out, fmt.Sprintf("%s has argument %s, which the fast path does not read", name, a.Name))
		}
	}
	for _, a := range args {
		if f.Arguments.ForName(a) == nil {
			out = append(out, fmt.Sprintf("the fast path reads argument %s of %s, which the schema lacks", a, name))
		}
	}
	for _, d := range f.Directives {
		if d.Name != "deprecated" {
			out = append(out, fmt.Sprintf("%s has directive @%s, which the fast path does not apply", name, d.Name))
		}
	}
	return out
}

// reachProblems walks the types the fast path renders from its root
// fields and reports any it reaches that has neither rules nor is a
// connection type.
func reachProblems(schema *ast.Schema) []string {
	var out []string
	seen := map[string]bool{}
	var walk func(typ string)
	walk = func(typ string) {
		def := schema.Types[typ]
		if seen[typ] || def == nil || def.Kind != ast.Object {
			return
		}
		seen[typ] = true
		if fieldRules[typ] == nil && connectionFields[typ] == nil {
			out = append(out, fmt.Sprintf("the fast path renders objects of %s, which has no rules in fields.go", typ))
			return
		}
		for _, f := range def.Fields {
			if r, ok := fieldRules[typ][f.Name]; (ok && r.render != nil) || slices.Contains(connectionFields[typ], f.Name) {
				walk(f.Type.Name())
			}
		}
	}
	for root := range fastRoots {
		if f := schema.Query.Fields.ForName(root); f != nil {
			walk(f.Type.Name())
		}
	}
	return out
}

// TestFastPathDeclinesWhatItDoesNotRead checks, against schemas that grow
// an argument or a directive on a field the fast path renders, that it
// declines before fetching, with the reason the metric reports.
func TestFastPathDeclinesWhatItDoesNotRead(t *testing.T) {
	base := readSchema(t)
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
			schema := parseSchema(t, tc.schema)
			doc, errs := gqlparser.LoadQuery(schema, tc.query)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			oc := &graphql.OperationContext{Doc: doc, Operation: doc.Operations[0], Variables: map[string]any{}}
			root := graphql.CollectFields(oc, doc.Operations[0].SelectionSet, []string{"Query"})[0]
			reason, ok := fastField(root, fastRoots["timeline"])
			if ok {
				reason, ok = fastSupported(oc, root.Selections, "Timeline", false)
			}
			if ok != tc.ok || (!ok && reason != tc.reason) {
				t.Fatalf("fast path: ok %v reason %s, want ok %v reason %s", ok, FallbackReasons[reason], tc.ok, FallbackReasons[tc.reason])
			}
		})
	}
}
