package gqlguard

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// Model is what the cost and response-size estimates know of the schema.
// Fields and types missing from Schema count as one field and a default
// string each: validation refuses them afterwards anyway.
type Model struct {
	Schema *ast.Schema
	// PageArg names the page-size argument of paginated fields ("first").
	// A paginated field's selections count once per item of a page: its
	// argument's value, or the argument's default when it is absent or
	// outside 1..MaxPage (the resolver then refuses it with its own error).
	PageArg string
	MaxPage int
	// ListSizes bounds the unpaginated list fields, by "Type.field": the
	// most items they can return. Other unpaginated lists count
	// DefaultListSize items, except the first list below a paginated field
	// (a connection's edges), which that field's page size already counts.
	ListSizes       map[string]int
	DefaultListSize int
	// StringBytes is the longest value of string fields, in bytes of JSON,
	// by "Type.field"; other strings count DefaultStringBytes.
	StringBytes        map[string]int
	DefaultStringBytes int
}

// stats are one selection's totals with its fragments expanded.
type stats struct {
	fields, aliases, directives int64
	cost, bytes                 int64
	depth                       int
}

func (s stats) plus(o stats) stats {
	return stats{
		fields:     add(s.fields, o.fields),
		aliases:    add(s.aliases, o.aliases),
		directives: add(s.directives, o.directives),
		cost:       add(s.cost, o.cost),
		bytes:      add(s.bytes, o.bytes),
		depth:      max(s.depth, o.depth),
	}
}

// memoKey names one fragment's totals for one pending page size (see
// selectionSet): as many as the document has distinct page sizes at most.
type memoKey struct {
	name    string
	pending int64
}

// walker computes a document's totals, each fragment's once.
type walker struct {
	g        *Guard
	doc      *ast.QueryDocument
	vars     map[string]any
	memo     map[memoKey]*stats
	visiting map[string]bool
	reached  map[string]bool
	opStats  stats
	err      *gqlerror.Error
}

// document totals every operation (validation walks them all) and the
// fragments no operation spreads; it keeps the selected operation's
// totals in opStats.
func (w *walker) document(operationName string) (stats, *ast.OperationDefinition, *gqlerror.Error) {
	w.reached = map[string]bool{}
	selected := w.doc.Operations.ForName(operationName)
	var total stats
	for _, op := range w.doc.Operations {
		s := w.selectionSet(op.SelectionSet, w.rootType(op.Operation), 0)
		s.directives = add(s.directives, int64(len(op.Directives)))
		if w.err != nil {
			return total, nil, w.err
		}
		if op == selected {
			w.opStats = s
		}
		total = total.plus(s)
	}
	for _, f := range w.doc.Fragments {
		if !w.reached[f.Name] {
			total = total.plus(w.fragment(f, 0))
			if w.err != nil {
				return total, nil, w.err
			}
		}
	}
	return total, selected, nil
}

func (w *walker) rootType(op ast.Operation) *ast.Definition {
	s := w.g.model.Schema
	if s == nil {
		return nil
	}
	switch op {
	case ast.Mutation:
		return s.Mutation
	case ast.Subscription:
		return s.Subscription
	}
	return s.Query
}

func (w *walker) typeNamed(name string) *ast.Definition {
	if w.g.model.Schema == nil {
		return nil
	}
	return w.g.model.Schema.Types[name]
}

// selectionSet totals the selections of a set whose parent type is
// parent (nil when unknown). pending is the page size of a paginated
// field above whose items are the first list below it (a connection's
// edges): that list's response counts pending items.
func (w *walker) selectionSet(set ast.SelectionSet, parent *ast.Definition, pending int64) stats {
	var total stats
	for _, sel := range set {
		if w.err != nil {
			return total
		}
		switch sel := sel.(type) {
		case *ast.Field:
			total = total.plus(w.field(sel, parent, pending))
		case *ast.InlineFragment:
			t := parent
			if sel.TypeCondition != "" {
				t = w.typeNamed(sel.TypeCondition)
			}
			s := w.selectionSet(sel.SelectionSet, t, pending)
			s.directives = add(s.directives, int64(len(sel.Directives)))
			total = total.plus(s)
		case *ast.FragmentSpread:
			def := w.doc.Fragments.ForName(sel.Name)
			if def == nil {
				continue // validation reports the unknown fragment
			}
			s := w.fragment(def, pending)
			s.directives = add(s.directives, int64(len(sel.Directives)))
			total = total.plus(s)
		}
	}
	return total
}

// fragment returns a fragment's totals, computed on its first spread and
// reused on the others: the walk is linear in the document, however many
// times the fragments multiply. A fragment that spreads itself is refused
// here, as validation would, before it could recurse for ever.
func (w *walker) fragment(def *ast.FragmentDefinition, pending int64) stats {
	key := memoKey{def.Name, pending}
	if s, ok := w.memo[key]; ok {
		return *s
	}
	if w.visiting[def.Name] {
		w.err = refuse(CodeValidation, "cannot spread fragment %q within itself", def.Name)
		return stats{}
	}
	w.visiting[def.Name] = true
	w.reached[def.Name] = true
	s := w.selectionSet(def.SelectionSet, w.typeNamed(def.TypeCondition), pending)
	s.directives = add(s.directives, int64(len(def.Directives)))
	w.visiting[def.Name] = false
	w.memo[key] = &s
	return s
}

func (w *walker) field(f *ast.Field, parent *ast.Definition, pending int64) stats {
	var def *ast.FieldDefinition
	if parent != nil {
		def = parent.Fields.ForName(f.Name)
	}
	var childType *ast.Definition
	if def != nil {
		childType = w.typeNamed(def.Type.Name())
	}
	n := w.items(f, parent, def, pending)
	child := w.selectionSet(f.SelectionSet, childType, n.pending)

	s := stats{
		fields:     add(1, child.fields),
		aliases:    child.aliases,
		directives: add(child.directives, int64(len(f.Directives))),
		depth:      1 + child.depth,
		cost:       add(1, mul(n.cost, child.cost)),
	}
	if f.Alias != "" && f.Alias != f.Name {
		s.aliases = add(s.aliases, 1)
	}
	// "key": value, — the value an object ({…}) or a scalar, items
	// times over in a list ([…, …]).
	key := int64(len(f.Alias)) + 4
	if f.Alias == "" {
		key = int64(len(f.Name)) + 4
	}
	value := add(child.bytes, 2)
	if len(f.SelectionSet) == 0 {
		value = w.scalarBytes(parent, def, f.Name)
	}
	if def != nil && def.Type.Elem != nil {
		value = add(mul(n.bytes, add(value, 1)), 2)
	}
	s.bytes = add(key, value)
	return s
}

// multipliers say how many times a field's selections count.
type multipliers struct {
	// cost multiplies the selections' cost: a paginated field's page size
	// (as gqlgen's complexity counts it), an unpaginated list's bound.
	cost int64
	// bytes is the items of a list field's response.
	bytes int64
	// pending passes a page size down to the list that holds the page.
	pending int64
}

func (w *walker) items(f *ast.Field, parent *ast.Definition, def *ast.FieldDefinition, pending int64) multipliers {
	m := w.g.model
	if def == nil || strings.HasPrefix(def.Name, "__") || strings.HasPrefix(parent.Name, "__") {
		// Introspection's lists are as long as the schema is large, not
		// as a client asks; validation bounds their nesting
		// (MaxIntrospectionDepth) and the response ceiling their size.
		return multipliers{1, 1, 0}
	}
	isList := def.Type.Elem != nil
	if m.PageArg != "" {
		if arg := def.Arguments.ForName(m.PageArg); arg != nil {
			n := w.pageSize(f, arg)
			if isList {
				return multipliers{n, n, 0}
			}
			return multipliers{n, 1, n}
		}
	}
	switch {
	case !isList:
		return multipliers{1, 1, pending}
	case pending > 0:
		return multipliers{1, pending, 0}
	}
	n := int64(max(m.DefaultListSize, 1))
	if b, ok := m.ListSizes[parent.Name+"."+f.Name]; ok {
		n = int64(max(b, 1))
	}
	return multipliers{n, n, 0}
}

// pageSize is the page a paginated field asks for: its argument (literal
// or variable) when within 1..MaxPage, else the argument's default.
func (w *walker) pageSize(f *ast.Field, arg *ast.ArgumentDefinition) int64 {
	def := int64(1)
	if arg.DefaultValue != nil {
		if n, ok := toInt(arg.DefaultValue.Raw, arg.DefaultValue.Kind); ok {
			def = n
		}
	}
	a := f.Arguments.ForName(arg.Name)
	if a == nil || a.Value == nil {
		return def
	}
	var n int64
	var ok bool
	switch a.Value.Kind {
	case ast.Variable:
		n, ok = numberOf(w.vars[a.Value.Raw])
	case ast.IntValue:
		n, ok = toInt(a.Value.Raw, a.Value.Kind)
	}
	if !ok || n < 1 || (w.g.model.MaxPage > 0 && n > int64(w.g.model.MaxPage)) {
		return def
	}
	return n
}

func toInt(raw string, kind ast.ValueKind) (int64, bool) {
	if kind != ast.IntValue {
		return 0, false
	}
	return numberOf(json.Number(raw))
}

// numberOf reads a variable's value as gqlgen may have decoded it.
func numberOf(v any) (int64, bool) {
	switch v := v.(type) {
	case int:
		return int64(v), true
	case int64:
		return v, true
	case float64:
		if v != math.Trunc(v) || math.Abs(v) > 1<<53 {
			return 0, false
		}
		return int64(v), true
	case json.Number:
		n, err := v.Int64()
		return n, err == nil
	}
	return 0, false
}

// scalarBytes is the longest JSON a leaf field's value takes.
func (w *walker) scalarBytes(parent *ast.Definition, def *ast.FieldDefinition, name string) int64 {
	m := w.g.model
	if name == "__typename" {
		return 32
	}
	if parent != nil {
		if n, ok := m.StringBytes[parent.Name+"."+name]; ok {
			return int64(n) + 2
		}
	}
	if def == nil {
		return int64(m.DefaultStringBytes) + 2
	}
	t := w.typeNamed(def.Type.Name())
	if t != nil && t.Kind == ast.Enum {
		longest := 0
		for _, v := range t.EnumValues {
			longest = max(longest, len(v.Name))
		}
		return int64(longest) + 2
	}
	switch def.Type.Name() {
	case "Int":
		return 11
	case "Float":
		return 24
	case "Boolean":
		return 5
	case "ID":
		return 22
	case "String":
		return int64(m.DefaultStringBytes) + 2
	}
	return 64 // a custom scalar: a timestamp, a JSON value
}
