// Package gqlguard measures a GraphQL document cheaply, before the parser's
// validation rules and the executor spend anything on it, and refuses the
// documents that exceed the configured limits.
//
// gqlparser's validation rules and gqlgen's complexity walk expand every
// fragment spread and compare fields pairwise: a 1 KB document whose
// fragments each spread the previous one twice, or 20 000 copies of one
// field, keeps a core busy for minutes. Here the lexer counts tokens with a
// bound first (linear, stops at the limit), then the bounded document is
// parsed and walked once per fragment: each fragment's totals are computed
// once and reused wherever it is spread (multiplied, never re-expanded), so
// the walk is linear in the document's size whatever its expansion.
package gqlguard

import (
	"fmt"
	"math"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/lexer"
	"github.com/vektah/gqlparser/v2/parser"
)

// Error codes of refused documents: gqlgen's own, as the contract lists
// them.
const (
	// CodeParse is a document that does not parse.
	CodeParse = "GRAPHQL_PARSE_FAILED"
	// CodeValidation is a document over a size or shape limit.
	CodeValidation = "GRAPHQL_VALIDATION_FAILED"
	// CodeComplexity is a document whose cost or response would be too
	// large.
	CodeComplexity = "COMPLEXITY_LIMIT_EXCEEDED"
)

// Limits bound a document; zero disables a limit.
type Limits struct {
	// Tokens bounds the lexer tokens of the document (punctuation, names,
	// values): the parser's work and the size of literal arguments.
	Tokens int
	// Fields bounds the field selections of the document with every
	// fragment spread expanded: the work of validation and execution.
	Fields int
	// Depth bounds the nesting of fields.
	Depth int
	// Aliases bounds the aliased fields, fragments expanded.
	Aliases int
	// Directives bounds the directives, fragments expanded.
	Directives int
	// Cost bounds the executed operation's cost: one per field, a list
	// field's selections counted once per item it may return.
	Cost int
	// ResponseBytes bounds the estimated largest response of the executed
	// operation, in bytes.
	ResponseBytes int
}

// Report is what Check measured. Counts stop growing once over a limit;
// Tokens is 0 for a document UseParsed's lookup found.
type Report struct {
	Tokens, Fields, Depth, Aliases, Directives int
	Cost, ResponseBytes                        int
	// Operation is the selected operation's type ("" when the document
	// names no such operation: validation reports that).
	Operation ast.Operation
}

// Guard checks documents against limits and a schema's cost model.
type Guard struct {
	limits Limits
	model  Model
	parsed func(query string) (*ast.QueryDocument, bool)
}

// New returns a guard over the cost model m.
func New(l Limits, m Model) *Guard {
	return &Guard{limits: l, model: m}
}

// Limits returns the guard's limits.
func (g *Guard) Limits() Limits { return g.limits }

// UseParsed lets Check skip lexing and parsing a document seen before:
// lookup returns the parsed document of a query text that this guard let
// through when it was first seen. The handler gives gqlgen's cache of
// parsed and validated documents, which holds only such documents (the
// guard runs before gqlgen parses, on every transport). Parsing is most of
// Check's cost (40 µs of the reference query's 55); the walk, which
// depends on the variables, runs every time. Call it before the guard is
// used.
func (g *Guard) UseParsed(lookup func(query string) (*ast.QueryDocument, bool)) { g.parsed = lookup }

// Check measures query and refuses it when a limit is exceeded. vars are
// the request's variables (page sizes may come from them); operationName
// selects the operation whose cost is checked.
func (g *Guard) Check(query, operationName string, vars map[string]any) (Report, *gqlerror.Error) {
	var r Report
	doc, err := g.parse(query, &r)
	if err != nil {
		return r, err
	}
	w := walker{g: g, doc: doc, vars: vars, memo: map[memoKey]*stats{}, visiting: map[string]bool{}}
	total, op, werr := w.document(operationName)
	r.Fields, r.Depth, r.Aliases, r.Directives = clampInt(total.fields), total.depth, clampInt(total.aliases), clampInt(total.directives)
	if werr != nil {
		return r, werr
	}
	if op != nil {
		r.Operation = op.Operation
		r.Cost, r.ResponseBytes = clampInt(w.opStats.cost), clampInt(w.opStats.bytes)
	}
	l := g.limits
	switch {
	case over(l.Fields, total.fields):
		return r, refuse(CodeValidation, "the document selects more than %d fields (fragments expanded)", l.Fields)
	case l.Depth > 0 && total.depth > l.Depth:
		return r, refuse(CodeValidation, "the document nests fields deeper than %d levels", l.Depth)
	case over(l.Aliases, total.aliases):
		return r, refuse(CodeValidation, "the document has more than %d aliases (fragments expanded)", l.Aliases)
	case over(l.Directives, total.directives):
		return r, refuse(CodeValidation, "the document has more than %d directives (fragments expanded)", l.Directives)
	case op != nil && over(l.Cost, w.opStats.cost):
		return r, refuse(CodeComplexity, "operation has complexity %s, which exceeds the limit of %d", show(w.opStats.cost), l.Cost)
	case op != nil && over(l.ResponseBytes, w.opStats.bytes):
		return r, refuse(CodeComplexity, "the response could reach %s bytes, more than the limit of %d: ask for fewer or smaller pages", show(w.opStats.bytes), l.ResponseBytes)
	}
	return r, nil
}

// parse returns the document of query, parsed once its tokens are counted
// within the limit, or as the lookup of UseParsed has it (r.Tokens stays
// 0 then: the count was taken when the document was first seen).
func (g *Guard) parse(query string, r *Report) (*ast.QueryDocument, *gqlerror.Error) {
	if g.parsed != nil {
		if doc, ok := g.parsed(query); ok {
			return doc, nil
		}
	}
	src := &ast.Source{Input: query}
	n, err := countTokens(src, g.limits.Tokens)
	r.Tokens = n
	if err != nil {
		return nil, err
	}
	if g.limits.Tokens > 0 && n > g.limits.Tokens {
		return nil, refuse(CodeValidation, "the document has more than %d tokens", g.limits.Tokens)
	}
	doc, perr := parser.ParseQuery(src)
	if perr != nil {
		if ge, ok := perr.(*gqlerror.Error); ok {
			setCode(ge, CodeParse)
			return nil, ge
		}
		return nil, refuse(CodeParse, "%s", perr.Error())
	}
	return doc, nil
}

// countTokens lexes src up to limit+1 tokens (all of them when limit is
// 0). A lexing error is a parse error, as the parser would report it.
func countTokens(src *ast.Source, limit int) (int, *gqlerror.Error) {
	lx := lexer.New(src)
	n := 0
	for {
		tok, err := lx.ReadToken()
		if err != nil {
			if ge, ok := err.(*gqlerror.Error); ok {
				setCode(ge, CodeParse)
				return n, ge
			}
			return n, refuse(CodeParse, "%s", err.Error())
		}
		if tok.Kind == lexer.EOF {
			return n, nil
		}
		n++
		if limit > 0 && n > limit {
			return n, nil
		}
	}
}

func refuse(code, format string, args ...any) *gqlerror.Error {
	e := gqlerror.Errorf(format, args...)
	setCode(e, code)
	return e
}

func setCode(e *gqlerror.Error, code string) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = code
}

// over reports whether n exceeds limit; a saturated count exceeds every
// limit.
func over(limit int, n int64) bool { return limit > 0 && (n > int64(limit) || n >= ceiling) }

// ceiling is where counts saturate: far above any limit, far below
// overflow, so sums and products of saturated counts stay saturated.
const ceiling = int64(1) << 50

func add(a, b int64) int64 { return min(a+b, ceiling) }

func mul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > ceiling/b {
		return ceiling
	}
	return min(a*b, ceiling)
}

func clampInt(n int64) int {
	if n > math.MaxInt32 {
		return math.MaxInt32
	}
	return int(n)
}

func show(n int64) string {
	if n >= ceiling {
		return fmt.Sprintf("over %d", ceiling)
	}
	return fmt.Sprint(n)
}

// DefaultCost is the COMPLEXITY_LIMIT the gateway starts with.
const DefaultCost = 20000

// DefaultLimits are the limits the gateway starts with (docs/security.md
// says why each): they keep gqlparser's validation under about 15 ms of
// CPU on the worst document they let through, and pass every document a
// client of the API sends in practice. cost is the COMPLEXITY_LIMIT
// setting.
func DefaultLimits(cost int) Limits {
	return Limits{
		Tokens:        10000,
		Fields:        300,
		Depth:         20,
		Aliases:       100,
		Directives:    100,
		Cost:          cost,
		ResponseBytes: 4 << 20,
	}
}
