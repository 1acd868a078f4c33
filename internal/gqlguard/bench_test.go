package gqlguard_test

import (
	"fmt"
	"testing"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
	"github.com/vektah/gqlparser/v2/validator"
	_ "github.com/vektah/gqlparser/v2/validator/rules" // the default rules, as gqlgen runs them

	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/gqlguard/hostile"
)

// validationCases are the documents whose validation cost sets the
// defaults: sizes around the limits, and the hostile documents.
func validationCases() []hostile.Class {
	var cs []hostile.Class
	for _, n := range []int{250, 300, 500, 1000, 2000} {
		cs = append(cs, hostile.Class{Name: fmt.Sprintf("repeated-field-%d", n), Doc: hostile.RepeatedField(n)})
	}
	for _, n := range []int{50, 60, 100, 200} {
		cs = append(cs, hostile.Class{Name: fmt.Sprintf("repeated-nested-field-%d", n), Doc: hostile.RepeatedNested(n)})
	}
	for _, n := range []int{1000, 5000} {
		cs = append(cs, hostile.Class{Name: fmt.Sprintf("aliases-%d", n), Doc: hostile.Aliases(n)})
	}
	for _, n := range []int{16, 24} {
		cs = append(cs, hostile.Class{Name: fmt.Sprintf("exponential-fragments-%d", n), Doc: hostile.ExponentialFragments(n)})
	}
	for _, n := range []int{10000, 100000} {
		cs = append(cs, hostile.Class{Name: fmt.Sprintf("list-literal-%d", n), Doc: hostile.ListLiteral(n)})
	}
	cs = append(cs,
		hostile.Class{Name: "nested-list-literal-5000", Doc: hostile.NestedListLiteral(5000)},
		hostile.Class{Name: "directives-5000", Doc: hostile.Directives(5000)},
	)
	return cs
}

// BenchmarkValidation measures gqlparser's parsing and validation (what
// gqlgen runs on every new document) against the guard's check of the
// same document:
//
//	go test -run '^$' -bench Validation ./internal/gqlguard/
func BenchmarkValidation(b *testing.B) {
	m := model(b)
	guard := gqlguard.New(gqlguard.DefaultLimits(20000), m)
	for _, c := range validationCases() {
		b.Run("gqlparser/"+c.Name, func(b *testing.B) {
			for range b.N {
				doc, err := parser.ParseQuery(&ast.Source{Input: c.Doc})
				if err != nil {
					b.Fatal(err)
				}
				validator.Validate(m.Schema, doc)
			}
		})
		b.Run("guard/"+c.Name, func(b *testing.B) {
			for range b.N {
				guard.Check(c.Doc, "", nil)
			}
		})
	}
}
