package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// The JSON of requests (bodies, URL parameters, websocket messages) is
// checked here before it becomes Go values, as gqlgen's transports would
// decode it but refusing, with a plain message, what they would let
// through or answer naming Go types.

const loneSurrogateMessage = "the request escapes half of a UTF-16 surrogate pair (\\uD800–\\uDFFF without its other half): not a character"

// loneSurrogate reports whether JSON text escapes half of a UTF-16
// surrogate pair: a high half (\uD800–\uDBFF) not followed by an escaped
// low half, or a low half (\uDC00–\uDFFF) alone. encoding/json turns one
// into U+FFFD without a word, so a post would be stored other than sent.
// Malformed escapes are left to the JSON decoder, which refuses them.
func loneSurrogate(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := escapedUnit(b, i)
		switch {
		case !ok:
			i++ // an escaped character (\\, \", \n, …): skip it
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := escapedUnit(b, i+6); !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

// escapedUnit reads the UTF-16 unit of a \uXXXX escape at b[i:].
func escapedUnit(b []byte, i int) (rune, bool) {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
	return rune(n), err == nil
}

// paramNames are the members of a request's parameters (a POST body, the
// payload of a websocket operation).
var paramNames = []string{"query", "operationName", "variables", "extensions"}

// objectMembers reads the members of the JSON object raw by name and
// returns the first name it holds twice ("" when none). A member is named
// as encoding/json matches it to a field of names: without regard to case
// ("Query", "variableſ"), so two spellings of one field count as the same
// member and a bound on "variables" holds for every spelling; other
// members by their exact name. raw that is not an object has no members
// here (its decoding refuses it).
func objectMembers(raw []byte, names []string) (map[string]json.RawMessage, string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, "", err
	}
	m, dup := map[string]json.RawMessage{}, ""
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, "", err
		}
		k := memberName(t, names)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, "", err
		}
		if _, seen := m[k]; seen && dup == "" {
			dup = k
		}
		m[k] = v
	}
	return m, dup, nil
}

// memberName is a member's name as encoding/json matches it to a field of
// names.
func memberName(t json.Token, names []string) string {
	k, _ := t.(string)
	for _, name := range names {
		if strings.EqualFold(k, name) {
			return name
		}
	}
	return k
}

// duplicateMember is a member a request's object names twice: its name
// for a member of the request's own object, else a JSON pointer to it
// (RFC 6901: "/variables/input/name").
type duplicateMember string

func (d duplicateMember) Error() string { return d.in("request", 200) }

// inMessage is the refusal of a websocket message that names d twice. A
// long name is cut, so that the refusal fits in a close frame's reason.
func (d duplicateMember) inMessage() string { return d.in("message", 32) }

// in words the refusal of what names d twice, its name and the object
// holding it cut to n bytes each.
func (d duplicateMember) in(what string, n int) string {
	short := func(s string) string {
		if c := cut(s, n); c != s {
			return c + "…"
		}
		return s
	}
	name, parent := string(d), ""
	if p := jsontext.Pointer(d); strings.HasPrefix(string(d), "/") {
		name, parent = p.LastToken(), string(p.Parent())
	}
	if parent == "" {
		return fmt.Sprintf("the member %q appears twice in the %s", short(name), what)
	}
	return fmt.Sprintf("the member %q appears twice in the %s's %s", short(name), what, short(parent))
}

// repeatedName returns the first member that JSON text names twice in one
// object, at any depth (a variable's input object as much as the
// request's own members), as a JSON pointer to its second occurrence; ""
// when none does, or when the text is not JSON (its decoding refuses it).
// encoding/json keeps the last of two, so what runs would be other than
// what a proxy, a log or a reviewer reading the first takes it for.
// jsontext reads by RFC 7493's rules, which refuse a name given twice;
// from a bytes.Buffer it parses in place, without a copy.
func repeatedName(raw []byte) duplicateMember {
	_, err := jsontext.NewDecoder(bytes.NewBuffer(raw)).ReadValue()
	var syn *jsontext.SyntacticError
	if !errors.Is(err, jsontext.ErrDuplicateName) || !errors.As(err, &syn) {
		return ""
	}
	return duplicateMember(syn.JSONPointer)
}

// Bounds of a request's variables, checked on their JSON text before they
// become Go values: the largest legitimate ones (a post with an audience
// of 1000 ids) are about 15 KB and 1000 values.
const (
	maxVariablesBytes  = 64 << 10
	maxVariablesValues = 5000
)

var errVariablesTooLarge = fmt.Errorf("the variables exceed %d bytes or %d values", maxVariablesBytes, maxVariablesValues)

// checkVariables refuses variables over maxVariablesBytes or
// maxVariablesValues (counted as the JSON text's values: one for each
// array element and object member, without decoding them).
func checkVariables(v []byte) error {
	if len(v) > maxVariablesBytes {
		return errVariablesTooLarge
	}
	return checkValues(v)
}

// checkValues refuses JSON text of more than maxVariablesValues values.
func checkValues(v []byte) error {
	values, inString := 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == ',' || c == '[' || c == '{'):
			values++
		}
	}
	if values > maxVariablesValues {
		return errVariablesTooLarge
	}
	return nil
}

// decodeObject decodes a GET request's variables or extensions as
// gqlgen's GET transport does, refusing what encoding/json's Unmarshal
// into a map refuses (decodeJSON; "" is no object).
func decodeObject(v string) (map[string]any, error) {
	if v == "" {
		return nil, nil
	}
	var obj map[string]any
	if err := decodeJSON([]byte(v), &obj); err != nil {
		return nil, err
	}
	if !finiteNumbers(obj) {
		return nil, errors.New("a number out of range")
	}
	return obj, nil
}

// decodeJSON decodes one JSON value into v as gqlgen's transports decode
// requests, numbers kept as json.Number (an Int variable is not rounded
// through a float), and refuses data after it, as encoding/json's
// Unmarshal does. json.Number lets through numbers no float64 holds
// (1e400), which Unmarshal refuses: the callers check them with
// finiteNumbers.
func decodeJSON(src []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if rest := bytes.TrimLeft(src[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return errors.New("data after the JSON value")
	}
	return nil
}

// finiteNumbers reports whether every number in a decoded JSON value fits
// a float64, as encoding/json requires of the numbers it decodes itself.
func finiteNumbers(v any) bool {
	switch v := v.(type) {
	case json.Number:
		_, err := strconv.ParseFloat(string(v), 64)
		return err == nil
	case map[string]any:
		for _, e := range v {
			if !finiteNumbers(e) {
				return false
			}
		}
	case []any:
		for _, e := range v {
			if !finiteNumbers(e) {
				return false
			}
		}
	}
	return true
}
