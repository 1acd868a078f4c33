package graph_test

import (
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/vektah/gqlparser/v2"
	"github.com/vektah/gqlparser/v2/ast"
)

// TestSchemaOnlyGrows compares schema.graphql with the last released
// schema (testdata/schema-released.graphql, copied from schema.graphql at
// each release): clients written against a release must keep working, so
// no type, field, argument or enum value goes away or changes kind, an
// output type only narrows (String to String!), an input type only widens
// (ID! to ID), and nothing new is required of a client (a new argument or
// input field must be nullable or have a default).
func TestSchemaOnlyGrows(t *testing.T) {
	load := func(path string) *ast.Schema {
		t.Helper()
		src, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s, gerr := gqlparser.LoadSchema(&ast.Source{Name: path, Input: string(src)})
		if gerr != nil {
			t.Fatalf("%s: %v", path, gerr)
		}
		return s
	}
	for _, p := range schemaBreaks(load("testdata/schema-released.graphql"), load("../schema.graphql")) {
		t.Error(p)
	}
}

// schemaBreaks lists what next breaks of old.
func schemaBreaks(old, next *ast.Schema) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	for name, ot := range old.Types {
		if ot.BuiltIn {
			continue
		}
		nt := next.Types[name]
		if nt == nil {
			add("type %s was removed", name)
			continue
		}
		if nt.Kind != ot.Kind {
			add("type %s changed from %s to %s", name, ot.Kind, nt.Kind)
			continue
		}
		for _, v := range ot.EnumValues {
			if nt.EnumValues.ForName(v.Name) == nil {
				add("enum value %s.%s was removed", name, v.Name)
			}
		}
		for _, m := range ot.Types {
			if !slices.Contains(nt.Types, m) {
				add("union %s lost member %s", name, m)
			}
		}
		input := ot.Kind == ast.InputObject
		for _, of := range ot.Fields {
			nf := nt.Fields.ForName(of.Name)
			if nf == nil {
				add("field %s.%s was removed", name, of.Name)
				continue
			}
			if input && !widens(of.Type, nf.Type) {
				add("input field %s.%s changed from %s to %s", name, of.Name, of.Type, nf.Type)
			}
			if !input && !narrows(of.Type, nf.Type) {
				add("field %s.%s changed from %s to %s", name, of.Name, of.Type, nf.Type)
			}
			for _, oa := range of.Arguments {
				na := nf.Arguments.ForName(oa.Name)
				if na == nil {
					add("argument %s.%s(%s) was removed", name, of.Name, oa.Name)
				} else if !widens(oa.Type, na.Type) {
					add("argument %s.%s(%s) changed from %s to %s", name, of.Name, oa.Name, oa.Type, na.Type)
				}
			}
			for _, na := range nf.Arguments {
				if of.Arguments.ForName(na.Name) == nil && na.Type.NonNull && na.DefaultValue == nil {
					add("argument %s.%s(%s) is new and required", name, of.Name, na.Name)
				}
			}
		}
		if input {
			for _, nf := range nt.Fields {
				if ot.Fields.ForName(nf.Name) == nil && nf.Type.NonNull && nf.DefaultValue == nil {
					add("input field %s.%s is new and required", name, nf.Name)
				}
			}
		}
	}
	return out
}

// narrows reports whether an output type may change from old to next:
// the same, or made non-null, at any depth.
func narrows(old, next *ast.Type) bool {
	if old.NonNull && !next.NonNull {
		return false
	}
	if (old.Elem == nil) != (next.Elem == nil) {
		return false
	}
	if old.Elem != nil {
		return narrows(old.Elem, next.Elem)
	}
	return old.NamedType == next.NamedType
}

// widens reports whether an input type may change from old to next: the
// same, or made nullable, at any depth.
func widens(old, next *ast.Type) bool { return narrows(next, old) }

func TestSchemaBreaks(t *testing.T) {
	const base = `type Query { a(x: ID): String! b: [Int!] }
		enum E { ONE TWO }
		input I { f: ID! }`
	tests := []struct {
		name, next string
		breaks     int
	}{
		{"same", base, 0},
		{"grown", base + ` type New { x: Int } extend type Query { c: Int } extend enum E { THREE }`, 0},
		{"output narrowed, input widened", `type Query { a(x: ID): String! b: [Int!]! } enum E { ONE TWO } input I { f: ID }`, 0},
		{"field removed", `type Query { a(x: ID): String! } enum E { ONE TWO } input I { f: ID! }`, 1},
		{"output widened", `type Query { a(x: ID): String b: [Int] } enum E { ONE TWO } input I { f: ID! }`, 2},
		{"argument narrowed", `type Query { a(x: ID!): String! b: [Int!] } enum E { ONE TWO } input I { f: ID! }`, 1},
		{"new required argument", `type Query { a(x: ID, y: Int!): String! b: [Int!] } enum E { ONE TWO } input I { f: ID! }`, 1},
		{"new argument with a default", `type Query { a(x: ID, y: Int! = 1): String! b: [Int!] } enum E { ONE TWO } input I { f: ID! }`, 0},
		{"enum value removed", `type Query { a(x: ID): String! b: [Int!] } enum E { ONE } input I { f: ID! }`, 1},
		{"new required input field", `type Query { a(x: ID): String! b: [Int!] } enum E { ONE TWO } input I { f: ID! g: Int! }`, 1},
		{"type kind changed", `type Query { a(x: ID): String! b: [Int!] } enum E { ONE TWO } type I { f: ID! }`, 1},
	}
	parse := func(src string) *ast.Schema {
		s, err := gqlparser.LoadSchema(&ast.Source{Input: src})
		if err != nil {
			t.Fatalf("%s: %v", src, err)
		}
		return s
	}
	old := parse(base)
	for _, tt := range tests {
		if got := schemaBreaks(old, parse(tt.next)); len(got) != tt.breaks {
			t.Errorf("%s: %d breaks %q, want %d", tt.name, len(got), got, tt.breaks)
		}
	}
}
