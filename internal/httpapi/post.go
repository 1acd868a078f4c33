package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"

	"github.com/socialgw/gateway/internal/clientaddr"
)

// postParams reads and decodes a JSON POST body: over max bytes it is
// refused with 413. Its buffer grows as its bytes arrive, each growth
// reserved in bodies for its client address (readBody) until the body is
// decoded, so slow bodies cannot add up past the budget, nor one
// address's past its share (503 or 429 with Retry-After when they would).
func postParams(w http.ResponseWriter, r *http.Request, max int64, bodies *bodyBudget) (*requestParams, *refusal) {
	if max > 0 && r.ContentLength > max {
		return nil, refuse(http.StatusRequestEntityTooLarge, "request body too large")
	}
	if max <= 0 {
		max = defaultMaxOperations
	}
	hold := bodies.hold(clientaddr.From(r.Context()))
	defer hold.release()
	raw, err := readBody(http.MaxBytesReader(w, r.Body, max), r.ContentLength, max, hold)
	if err != nil {
		return nil, bodyRefusal(err, "request body", max)
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
