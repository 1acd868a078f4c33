package trusted

import (
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/parser"
)

// Extract finds the GraphQL operations written in JavaScript sources (a
// single-page app's): string and template literals that hold a query,
// mutation or subscription, with `${NAME}` replaced by the literal that
// `const NAME = …` binds (a fragment, a selection). Each operation's body
// is its canonical form; the server recognises the client's own spelling
// by that form. Operations come sorted by name, then body.
func Extract(sources map[string]string) (*Manifest, error) {
	consts := map[string]string{}
	var lits []string
	for _, name := range sortedKeys(sources) {
		for _, l := range literals(sources[name]) {
			if l.binding != "" {
				consts[l.binding] = l.text
			}
			lits = append(lits, l.text)
		}
	}
	m := &Manifest{Format: "apollo-persisted-query-manifest", Version: 1}
	seen := map[string]bool{}
	for _, text := range lits {
		// "query failed" is a message, not a document.
		if !operationRE.MatchString(text) || !strings.Contains(text, "{") {
			continue
		}
		doc, err := resolve(text, consts, 0)
		if err != nil {
			return nil, err
		}
		body, err := canonical(doc, 0)
		if err != nil {
			return nil, fmt.Errorf("%q: %w", firstLine(text), err)
		}
		if seen[body] {
			continue
		}
		seen[body] = true
		q, _ := parser.ParseQuery(&ast.Source{Input: body})
		op := q.Operations[0]
		m.Operations = append(m.Operations, Operation{ID: Hash(body), Name: op.Name, Type: string(op.Operation), Body: body})
	}
	sort.Slice(m.Operations, func(i, j int) bool {
		a, b := m.Operations[i], m.Operations[j]
		return a.Name < b.Name || a.Name == b.Name && a.Body < b.Body
	})
	return m, nil
}

// operationRE is the start of a literal holding an operation.
var operationRE = regexp.MustCompile(`^\s*(query|mutation|subscription)\b`)

var interpolationRE = regexp.MustCompile(`\$\{\s*([A-Za-z_$][\w$]*)\s*\}`)

// resolve replaces `${NAME}` by the literal NAME is bound to.
func resolve(text string, consts map[string]string, depth int) (string, error) {
	if depth > 8 {
		return "", fmt.Errorf("%q: interpolations nest too deep", firstLine(text))
	}
	var err error
	out := interpolationRE.ReplaceAllStringFunc(text, func(m string) string {
		name := interpolationRE.FindStringSubmatch(m)[1]
		v, ok := consts[name]
		if !ok {
			err = fmt.Errorf("%q interpolates ${%s}, which is no string constant", firstLine(text), name)
			return m
		}
		r, rerr := resolve(v, consts, depth+1)
		if rerr != nil {
			err = rerr
		}
		return r
	})
	return out, err
}

// literal is a JavaScript string or template literal, and the constant
// it initialises, if any.
type literal struct{ text, binding string }

var bindingRE = regexp.MustCompile(`const\s+([A-Za-z_$][\w$]*)\s*=\s*(?:print\(\s*)?(?:gql\s*)?$`)

// literals scans JavaScript source for its string and template literals,
// skipping comments and regular expressions' quotes only as far as this
// app's sources need (no literal inside a regular expression).
func literals(src string) []literal {
	var out []literal
	for i := 0; i < len(src); i++ {
		switch c := src[i]; {
		case strings.HasPrefix(src[i:], "//"):
			i += strings.IndexByte(src[i:]+"\n", '\n')
		case strings.HasPrefix(src[i:], "/*"):
			i += strings.Index(src[i:]+"*/", "*/") + 1
		case c == '\'' || c == '"' || c == '`':
			j := i + 1
			for j < len(src) && src[j] != c {
				if src[j] == '\\' {
					j++
				}
				j++
			}
			l := literal{text: src[i+1 : min(j, len(src))]}
			if m := bindingRE.FindStringSubmatch(src[max(0, i-80):i]); m != nil {
				l.binding = m[1]
			}
			out = append(out, l)
			i = j
		}
	}
	return out
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
