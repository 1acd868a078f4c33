package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"

	"github.com/socialgw/gateway/internal/social"
)

// postParams reads and decodes a JSON POST body: over max bytes it is
// refused with 413; its memory is reserved in bodies while it is read
// and decoded, so slow bodies cannot add up past the budget (503 with
// Retry-After when they would).
func postParams(w http.ResponseWriter, r *http.Request, max int64, bodies *bodyBudget) (*requestParams, *refusal) {
	if max > 0 && r.ContentLength > max {
		return nil, refuse(http.StatusRequestEntityTooLarge, "request body too large")
	}
	size := r.ContentLength // at most max: checked above
	if size < 0 {
		size = max
	}
	if !bodies.take(size) {
		return nil, bodiesFull()
	}
	defer bodies.give(size)
	body := r.Body
	if max > 0 {
		body = http.MaxBytesReader(w, r.Body, max)
	}
	raw, err := readBody(body, r.ContentLength)
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return nil, refuse(http.StatusRequestEntityTooLarge, "request body too large")
	}
	if err != nil {
		return nil, refuse(http.StatusBadRequest, "could not read request body")
	}
	params, f := paramsOf(raw)
	if f != nil {
		return nil, f
	}
	if strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
		// gqlgen's SSE transport reads the body itself (it is known to
		// decode: it was just decoded here).
		r.Body = io.NopCloser(bytes.NewReader(raw))
	}
	return newParams(params), nil
}

// paramsOf checks and decodes the JSON text of a POST body or of a
// multipart request's operations part.
func paramsOf(raw []byte) (*graphql.RawParams, *refusal) {
	// encoding/json would silently turn invalid bytes into U+FFFD: a
	// client sending Latin-1 gets told instead.
	if !utf8.Valid(raw) {
		return nil, refuse(http.StatusBadRequest, "the request body is not valid UTF-8")
	}
	if loneSurrogate(raw) {
		return nil, refuse(http.StatusBadRequest, loneSurrogateMessage)
	}
	if dup := repeatedName(raw); dup != "" {
		return nil, refuse(http.StatusBadRequest, dup.Error())
	}
	// gqlgen's own decoding errors name Go types and echo the body:
	// check the shape here and answer plainly.
	params, err := decodeBody(raw)
	var dup duplicateMember
	switch {
	case errors.Is(err, errVariablesTooLarge) || errors.As(err, &dup):
		return nil, refuse(http.StatusBadRequest, err.Error())
	case err != nil:
		return nil, refuse(http.StatusBadRequest, "the body must be one JSON object with a string query and object variables and extensions")
	}
	return params, nil
}

// decodeBody decodes a body as gqlgen's transport does (encoding/json's
// Unmarshal into graphql.RawParams, numbers as json.Number), in one pass
// over its members, and refuses what Unmarshal refuses: anything but one
// JSON object whose query and operationName are strings and whose
// variables and extensions are objects. It also refuses a member named
// twice, which Unmarshal would resolve last-wins: {"query":"{me{id}}",
// "query":"mutation{logout}"} would run the logout that a proxy reading
// the first member took for a query. The variables are bounded
// (checkVariables) before they are decoded.
func decodeBody(raw []byte) (*graphql.RawParams, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	p := &graphql.RawParams{}
	t, err := dec.Token()
	switch {
	case err != nil:
		return nil, err
	case t == nil: // null: no parameters, as Unmarshal leaves them
		return p, nothingAfter(dec, raw)
	case t != json.Delim('{'):
		return nil, errors.New("not an object")
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k := memberName(t, paramNames)
		if seen[k] {
			return nil, duplicateMember(k)
		}
		seen[k] = true
		if err := decodeMember(dec, k, p); err != nil {
			return nil, err
		}
	}
	if _, err := dec.Token(); err != nil { // the closing brace
		return nil, err
	}
	if err := nothingAfter(dec, raw); err != nil {
		return nil, err
	}
	if !finiteNumbers(p.Variables) || !finiteNumbers(p.Extensions) {
		return nil, errors.New("a number out of range")
	}
	return p, nil
}

// decodeMember decodes the member k of a body into p.
func decodeMember(dec *json.Decoder, k string, p *graphql.RawParams) error {
	switch k {
	case "query":
		return dec.Decode(&p.Query)
	case "operationName":
		return dec.Decode(&p.OperationName)
	case "extensions":
		return dec.Decode(&p.Extensions)
	case "variables":
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return err
		}
		if err := checkVariables(v); err != nil {
			return err
		}
		return decodeJSON(v, &p.Variables)
	}
	var skip json.RawMessage
	return dec.Decode(&skip)
}

// nothingAfter refuses data after the JSON value dec has read, as
// encoding/json's Unmarshal does.
func nothingAfter(dec *json.Decoder, raw []byte) error {
	if rest := bytes.TrimLeft(raw[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return errors.New("data after the JSON value")
	}
	return nil
}

// bodyBudget is the memory JSON request bodies being read may hold, all
// requests together (Options.MaxBodyMemory): POST bodies, and the
// operations parts of multipart requests.
type bodyBudget struct{ left atomic.Int64 }

// bodiesFull answers a request whose body finds no room in the budget.
func bodiesFull() *refusal {
	return &refusal{status: http.StatusServiceUnavailable, code: social.RateLimited,
		msg: "the server is reading as many request bodies as it can hold: retry shortly", header: map[string]string{"Retry-After": "1"}}
}

// defaultBodyMemory is MaxBodyMemory's default: 64 bodies of the default
// MAX_BODY_BYTES at once.
const defaultBodyMemory = 64 << 20

func newBodyBudget(n int64) *bodyBudget {
	if n <= 0 {
		n = defaultBodyMemory
	}
	b := &bodyBudget{}
	b.left.Store(n)
	return b
}

// take reserves n bytes, or reports that they are not there.
func (b *bodyBudget) take(n int64) bool {
	for {
		left := b.left.Load()
		if left < n {
			return false
		}
		if b.left.CompareAndSwap(left, left-n) {
			return true
		}
	}
}

func (b *bodyBudget) give(n int64) { b.left.Add(n) }

// readBody reads a body into one buffer of its announced length (no
// doubling as io.ReadAll grows its buffer), or as io.ReadAll does without
// one.
func readBody(body io.Reader, length int64) ([]byte, error) {
	if length <= 0 {
		return io.ReadAll(body)
	}
	// net/http ends the body at its Content-Length.
	buf := make([]byte, length)
	if _, err := io.ReadFull(body, buf); err != nil {
		return nil, fmt.Errorf("read a body of %d bytes: %w", length, err)
	}
	return buf, nil
}
