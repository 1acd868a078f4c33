// Package hostile builds the hostile GraphQL documents the limits are
// tested and measured against: each one small on the wire and expensive to
// validate, plan or answer without limits. The guard's tests, the attack
// suite and the benchmarks share them, so what is measured is what is
// tested.
package hostile

import (
	"fmt"
	"strings"
)

// Class is one kind of hostile document.
type Class struct {
	// Name identifies the class in test and benchmark names.
	Name string
	// Doc is the document.
	Doc string
	// Code is the extensions.code the gateway must answer with; "" for a
	// document it serves.
	Code string
}

// Classes are the hostile documents with the error code each must get
// from the gateway with its default limits.
func Classes() []Class {
	return []Class{
		// Over the token limit.
		{"repeated-field-10k", RepeatedField(10000), "GRAPHQL_VALIDATION_FAILED"},
		{"repeated-field-20k", RepeatedField(20000), "GRAPHQL_VALIDATION_FAILED"},
		{"repeated-nested-field-2k", RepeatedNested(2000), "GRAPHQL_VALIDATION_FAILED"},
		{"list-literal-100k", ListLiteral(100000), "GRAPHQL_VALIDATION_FAILED"},
		{"nested-list-literal-20k", NestedListLiteral(20000), "GRAPHQL_VALIDATION_FAILED"},
		{"aliases-5k", Aliases(5000), "GRAPHQL_VALIDATION_FAILED"},
		{"directives-5k", Directives(5000), "GRAPHQL_VALIDATION_FAILED"},
		// Under the token limit, each over one other limit.
		{"exponential-fragments-30", ExponentialFragments(30), "GRAPHQL_VALIDATION_FAILED"},
		{"repeated-field-600", RepeatedField(600), "GRAPHQL_VALIDATION_FAILED"},
		{"repeated-nested-field-150", RepeatedNested(150), "GRAPHQL_VALIDATION_FAILED"},
		{"aliases-150", Aliases(150), "GRAPHQL_VALIDATION_FAILED"},
		{"directives-200", Directives(200), "GRAPHQL_VALIDATION_FAILED"},
		{"deep-nesting-200", Deep(200), "GRAPHQL_VALIDATION_FAILED"},
		{"fragment-cycle", FragmentCycle(), "GRAPHQL_VALIDATION_FAILED"},
		{"nested-pages", NestedPages(3, 100), "COMPLEXITY_LIMIT_EXCEEDED"},
		{"aliased-timelines-66", AliasedTimelines(66, 100), "COMPLEXITY_LIMIT_EXCEEDED"},
		// One token, under the body limit: a name nobody has.
		{"huge-string-literal-900k", StringLiteral(900 << 10), ""},
	}
}

// ExponentialFragments spreads each fragment's predecessor twice, levels
// deep: about 40 bytes a level, 2^levels fields once expanded.
func ExponentialFragments(levels int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "query { me { ...F%d } }\nfragment F0 on User { name id }\n", levels)
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "fragment F%d on User { ...F%d ...F%d }\n", i, i-1, i-1)
	}
	return b.String()
}

// RepeatedField selects one field n times: gqlparser's
// OverlappingFieldsCanBeMerged compares every pair.
func RepeatedField(n int) string {
	return "{ me { " + strings.Repeat("name ", n) + "} }"
}

// RepeatedNested repeats a field with a sub-selection n times at the root:
// every pair compared, and their sub-selections with them.
func RepeatedNested(n int) string {
	return "{ " + strings.Repeat("me { followers { edges { node { name } } } } ", n) + "}"
}

// AliasedTimelines asks for n aliases of a timeline page of first posts'
// contents: little work each, a large response together.
func AliasedTimelines(n, first int) string {
	var b strings.Builder
	b.WriteString("{ ")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "t%d: userTimeline(userId: \"1\", first: %d) { edges { node { content } } } ", i, first)
	}
	b.WriteString("}")
	return b.String()
}

// NestedPages nests levels pages of first followers.
func NestedPages(levels, first int) string {
	page := fmt.Sprintf("followers(first: %d) { edges { node { ", first)
	return "{ me { " + strings.Repeat(page, levels) + "id" + strings.Repeat(" } } }", levels) + " } }"
}

// Aliases selects the viewer under n aliases.
func Aliases(n int) string {
	var b strings.Builder
	b.WriteString("{ ")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "a%d: me { id } ", i)
	}
	b.WriteString("}")
	return b.String()
}

// Deep nests n levels of post → author → posts.
func Deep(levels int) string {
	open := strings.Repeat("posts { edges { node { author { ", levels/4+1)
	closing := strings.Repeat("} } } } ", levels/4+1)
	return "{ me { " + open + "id " + closing + "} }"
}

// Directives puts n @skip directives on one field.
func Directives(n int) string {
	return "{ me { name " + strings.Repeat("@skip(if: false) ", n) + "} }"
}

// ListLiteral passes a list literal of n items as an argument.
func ListLiteral(n int) string {
	return `{ user(id: [` + strings.Repeat("1,", n) + `]) { id } }`
}

// NestedListLiteral nests n list literals in an argument.
func NestedListLiteral(n int) string {
	return `{ user(id: ` + strings.Repeat("[", n) + strings.Repeat("]", n) + `) { id } }`
}

// StringLiteral passes a string literal of n bytes as an argument.
func StringLiteral(n int) string {
	return `{ user(name: "` + strings.Repeat("x", n) + `") { id } }`
}

// FragmentCycle spreads two fragments into each other.
func FragmentCycle() string {
	return "query { me { ...A } }\nfragment A on User { name ...B }\nfragment B on User { id ...A }\n"
}
