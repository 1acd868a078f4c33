package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/operation"
	"github.com/socialgw/gateway/internal/social"
)

// admit is the middleware that admits an HTTP request's one operation,
// as the operation gate admits each one of a websocket: it takes the
// process's execution slots (the heavy lane for a large response), runs
// the request under its deadline into a bounded buffer (boundedwriter.go)
// and answers with a GraphQL error when the slots, the deadline or the
// response bound give out first. It marks the request admitted, so that
// the gate lets its operation through.
type admit struct {
	slots    *operation.Slots
	timeout  time.Duration
	maxBytes int
	next     http.Handler
}

func admission(slots *operation.Slots, timeout time.Duration, maxBytes int) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return &admit{slots: slots, timeout: timeout, maxBytes: maxBytes, next: next}
	}
}

func (a *admit) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	r = r.WithContext(operation.Admitted(r.Context()))
	v := operation.VerdictFrom(r.Context())
	sse := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	switch {
	case v != nil && v.Err == nil && v.Report.Operation == ast.Subscription:
		// A subscription lives as long as its client: no deadline, no
		// slot, no buffer.
		a.next.ServeHTTP(w, r)
	case v != nil && v.Err != nil:
		// A refused document costs gqlgen only the writing of its error:
		// it takes no slot, so a flood of them never delays others.
		a.run(w, r, sse, a.slots.Track())
	default:
		d := operation.Demand{Client: operation.ClientOf(r.Context())}
		if v != nil {
			d.Heavy, d.Costly = operation.IsHeavy(v.Report), operation.IsCostly(v.Report)
		}
		lease, ok := a.slots.Acquire(r.Context(), d)
		if !ok {
			if r.Context().Err() != nil {
				return // the client left while waiting
			}
			a.slots.Burst()
			w.Header().Set("Retry-After", "1")
			writeLimitError(w, sse, http.StatusServiceUnavailable, string(social.RateLimited),
				"the server is busy: retry in a second")
			return
		}
		a.run(w, r, sse, lease)
	}
}

// freeThreshold is the response size from which a request counts as part
// of a burst worth handing memory back after.
const freeThreshold = 1 << 20

// run executes the request in its own goroutine under the deadline and
// answers with what it wrote, or with an error when the deadline, the
// response ceiling or a canceled client ends it first. The lease is
// released when the goroutine returns.
func (a *admit) run(w http.ResponseWriter, r *http.Request, sse bool, lease *operation.Lease) {
	ctx, cancel := context.WithCancelCause(r.Context())
	if a.timeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, a.timeout, operation.ErrDeadline)
		defer stop()
	}
	defer cancel(nil)
	buf := newBoundedWriter(a.maxBytes, func() { cancel(operation.ErrTooLarge) })
	ctx = operation.WithResponseBudget(ctx, a.maxBytes, func() { cancel(operation.ErrTooLarge) })
	finished := make(chan struct{})
	go func() {
		defer lease.Release()
		defer close(finished)
		a.next.ServeHTTP(buf, r.WithContext(ctx))
	}()
	select {
	case <-finished:
	case <-ctx.Done():
	}
	buf.mu.Lock()
	defer buf.mu.Unlock()
	buf.closed = true // late writes of an abandoned request go nowhere
	if buf.size() > freeThreshold {
		a.slots.Burst()
	}
	switch cause := context.Cause(ctx); {
	case r.Context().Err() != nil:
		// the client is gone
	case cause == operation.ErrTooLarge || buf.overflow:
		a.slots.Burst()
		writeLimitError(w, sse, http.StatusOK, gqlguard.CodeComplexity,
			fmt.Sprintf("the response exceeded %d bytes and was stopped: ask for fewer or smaller pages", a.maxBytes))
	case cause == operation.ErrDeadline && (!isDone(finished) || bytes.Equal(bytes.TrimSpace(buf.body.Bytes()), []byte("null"))):
		writeLimitError(w, sse, http.StatusGatewayTimeout, string(social.Internal),
			fmt.Sprintf("the request took longer than %s and was stopped", a.timeout))
	default:
		buf.writeTo(w)
	}
	buf.recycle()
}

func isDone(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}
