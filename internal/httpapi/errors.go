package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/socialgw/gateway/internal/gqlerr"
	"github.com/socialgw/gateway/internal/social"
)

// refusal is a request refused before execution: its status, code and
// message, and the headers that go with them.
type refusal struct {
	status int
	code   social.Code
	msg    string
	header map[string]string // Allow, Retry-After, WWW-Authenticate
}

func refuse(status int, msg string) *refusal {
	return &refusal{status: status, code: social.BadUserInput, msg: msg}
}

// with adds a header to the refusal.
func (f *refusal) with(name, value string) *refusal {
	if f.header == nil {
		f.header = map[string]string{}
	}
	f.header[name] = value
	return f
}

func (f *refusal) write(w http.ResponseWriter) {
	for k, v := range f.header {
		w.Header().Set(k, v)
	}
	writeError(w, f.status, f.code, f.msg)
}

// writeError writes a GraphQL-shaped error response outside execution.
func writeError(w http.ResponseWriter, status int, code social.Code, msg string) {
	writeErrors(w, status, &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": string(code)}})
}

// writeDomainError answers a request refused before execution by a domain
// error, as the error presenter words it: 503 with Retry-After for an
// internal one (logged; "retry shortly" when the store is unreachable),
// 429 with Retry-After for RATE_LIMITED, 400 otherwise.
func writeDomainError(w http.ResponseWriter, r *http.Request, err error) {
	gerr := gqlerr.Present(r.Context(), err)
	status := http.StatusBadRequest
	switch social.ErrorCode(err) {
	case social.Internal:
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	case social.RateLimited:
		status = http.StatusTooManyRequests
		if s, ok := gerr.Extensions["retryAfter"].(int); ok {
			w.Header().Set("Retry-After", strconv.Itoa(s))
		}
	}
	writeErrors(w, status, gerr)
}

// writeErrors writes errors as a GraphQL response outside execution.
func writeErrors(w http.ResponseWriter, status int, errs ...*gqlerror.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(graphql.Response{Errors: errs})
	_, _ = w.Write(b)
}

// writeLimitError answers with one GraphQL error: as an SSE event for a
// client that asked for a stream, else as the other refusals before
// execution are written (writeErrors).
func writeLimitError(w http.ResponseWriter, sse bool, status int, code, msg string) {
	gerr := &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": code}}
	if !sse {
		writeErrors(w, status, gerr)
		return
	}
	b, _ := json.Marshal(graphql.Response{Errors: gqlerror.List{gerr}})
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fmt.Fprintf(w, "event: next\ndata: %s\n\nevent: complete\n\n", b)
}
