package readpath

import (
	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
)

// Hand-written code that reads the document (the read-ahead plans, the
// timeline fast path) collects fields here and nowhere else.
//
// gqlgen caches collected fields for the operation, keyed by the address
// and length of the selection set. A set built here and dropped (the
// union of two aliased `edges { node }`, say) could be freed and its
// address taken by a set gqlgen collects later for another level; that
// level would then be answered with the dropped set's fields: a field the
// query did not ask for, one level too deep. So this file only ever hands
// gqlgen sets that live as long as the operation (the document's, and the
// Selections of fields gqlgen itself collected and cached), and a field
// path with several such sets is kept as the list of them (a selection),
// never merged into a new one.

// collect returns the fields of set for typ. set must be the document's or
// a CollectedField's Selections (see above).
func collect(oc *graphql.OperationContext, set ast.SelectionSet, typ string) []graphql.CollectedField {
	return graphql.CollectFields(oc, set, []string{typ})
}

// A selection is what a query asks of the objects at one field path: the
// selection sets gqlgen collected for it, one per aliased occurrence.
type selection []ast.SelectionSet

// fieldSel is the selection of one collected field.
func fieldSel(f graphql.CollectedField) selection {
	if len(f.Selections) == 0 {
		return nil
	}
	return selection{f.Selections}
}

// fields returns the fields the selection asks of typ, the fields of each
// set in turn (a field selected in two sets appears twice).
func (s selection) fields(oc *graphql.OperationContext, typ string) []graphql.CollectedField {
	if len(s) == 1 {
		return collect(oc, s[0], typ)
	}
	var out []graphql.CollectedField
	for _, set := range s {
		out = append(out, collect(oc, set, typ)...)
	}
	return out
}

// child is the selection of the fields named name (of an object of type
// typ), whatever their aliases.
func (s selection) child(oc *graphql.OperationContext, typ, name string) selection {
	var out selection
	for _, f := range s.fields(oc, typ) {
		if f.Name == name && len(f.Selections) > 0 {
			out = append(out, f.Selections)
		}
	}
	return out
}

// nodes is the selection of edges.node below a connection of type conn
// whose edges are of type edge.
func (s selection) nodes(oc *graphql.OperationContext, conn, edge string) selection {
	return s.child(oc, conn, "edges").child(oc, edge, "node")
}
