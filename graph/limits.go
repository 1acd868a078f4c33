package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/social"
)

// The limits that bound what one request may cost (docs/security.md):
// the document checks of gqlguard before gqlgen parses and validates
// anything, a cap on the requests executing at once, a deadline on every
// query and mutation whatever its transport, and a ceiling on the size of
// a response.

// guardModel is the cost model of this schema: pages of at most
// social.MaxFirst items, audience lists of social.MaxAudienceSize users,
// and user-written text at its longest once encoded as JSON (six bytes a
// character: a control character is written \u00XX, and an error
// response, which encoding/json writes, escapes <, > and & as \u003c).
func guardModel(schema *ast.Schema) gqlguard.Model {
	const jsonBytesPerChar = 6
	return gqlguard.Model{
		Schema:  schema,
		PageArg: "first",
		MaxPage: social.MaxFirst,
		ListSizes: map[string]int{
			"Post.onlyTo": social.MaxAudienceSize,
			"Post.notTo":  social.MaxAudienceSize,
		},
		DefaultListSize: social.MaxFirst,
		StringBytes: map[string]int{
			"Post.content":    jsonBytesPerChar * social.MaxPostLen,
			"Comment.content": jsonBytesPerChar * social.MaxCommentLen,
			"User.bio":        jsonBytesPerChar * social.MaxBioLen,
		},
		// Names, e-mail addresses, cursors, timestamps: short.
		DefaultStringBytes: 256,
	}
}

// checked is the guard's verdict on the document of an HTTP request,
// passed to the gqlgen extension so that the document is measured once.
type checked struct {
	query, operationName string
	report               gqlguard.Report
	err                  *gqlerror.Error
	// params are the request's decoded parameters (httpTransport
	// executes them).
	params *graphql.RawParams
}

type checkedKey struct{}

// guardExtension runs the guard in gqlgen, before parsing and validation,
// on every transport (websocket operations included), after the persisted
// query extension has filled the query in.
type guardExtension struct{ guard *gqlguard.Guard }

var (
	_ graphql.HandlerExtension          = guardExtension{}
	_ graphql.OperationParameterMutator = guardExtension{}
)

func (guardExtension) ExtensionName() string                          { return "DocumentLimits" }
func (guardExtension) Validate(schema graphql.ExecutableSchema) error { return nil }

func (e guardExtension) MutateOperationParameters(ctx context.Context, p *graphql.RawParams) *gqlerror.Error {
	if c, ok := ctx.Value(checkedKey{}).(*checked); ok && c.query == p.Query && c.operationName == p.OperationName {
		return c.err
	}
	_, err := e.guard.Check(p.Query, p.OperationName, p.Variables)
	return err
}

// limiter applies the per-process bounds to HTTP requests: it admits at
// most MaxConcurrent queries and mutations at once, of which a quarter
// with large responses, runs each under its deadline into a bounded
// buffer, and answers with a GraphQL error when the deadline or the size
// ceiling is hit first.
type limiter struct {
	timeout  time.Duration
	maxBytes int
	// slots hold the requests executing; heavy ones (a response estimated
	// over heavyBytes) also hold one of heavy, so that a flood of them
	// leaves most slots to ordinary requests and bounds the memory their
	// responses take together. nil: no cap.
	slots, heavy chan struct{}
	wait         time.Duration
	next         http.Handler

	inflight atomic.Int64
	// dirty records a burst (a large response, a full queue) since memory
	// was last handed back to the OS.
	dirty    atomic.Bool
	freeing  atomic.Bool
	lastFree atomic.Int64
}

func newLimiter(o Options) *limiter {
	l := &limiter{timeout: o.RequestTimeout, maxBytes: o.Limits.ResponseBytes, wait: o.QueueWait}
	if o.MaxConcurrent > 0 {
		l.slots = make(chan struct{}, o.MaxConcurrent)
		l.heavy = make(chan struct{}, max(1, o.MaxConcurrent/4))
	}
	return l
}

func (l *limiter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Upgrade") != "" {
		// Websockets: the operation gate admits each operation.
		l.next.ServeHTTP(w, r)
		return
	}
	r = r.WithContext(edgeAdmitted(r.Context()))
	c, _ := r.Context().Value(checkedKey{}).(*checked)
	sse := strings.Contains(r.Header.Get("Accept"), "text/event-stream")
	if c != nil && c.err == nil && c.report.Operation == ast.Subscription {
		// A subscription lives as long as its client: no deadline, no
		// slot, no buffer.
		l.next.ServeHTTP(w, r)
		return
	}
	if c != nil && c.err != nil {
		// A refused document costs gqlgen only the writing of its error:
		// it takes no slot, so a flood of them never delays others.
		l.inflight.Add(1)
		l.run(w, r, sse, nil)
		return
	}
	var lanes []chan struct{}
	if c != nil && c.report.ResponseBytes > heavyBytes {
		lanes = append(lanes, l.heavy)
	}
	lanes = append(lanes, l.slots)
	if !l.acquire(r.Context(), lanes) {
		if r.Context().Err() != nil {
			return // the client left while waiting
		}
		l.dirty.Store(true)
		w.Header().Set("Retry-After", "1")
		writeLimitError(w, sse, http.StatusServiceUnavailable, string(social.RateLimited),
			"the server is busy: retry in a second")
		return
	}
	l.run(w, r, sse, lanes)
}

// heavyBytes is the estimated response size from which a request takes a
// heavy slot: the reference timeline query is estimated at 150 KB.
const heavyBytes = 1 << 20

// acquire takes a slot in each lane, in order, waiting up to l.wait in
// all.
func (l *limiter) acquire(ctx context.Context, lanes []chan struct{}) bool {
	l.inflight.Add(1)
	if l.slots == nil {
		return true
	}
	t := time.NewTimer(l.wait)
	defer t.Stop()
	for i, lane := range lanes {
		select {
		case lane <- struct{}{}:
			continue
		default:
		}
		select {
		case lane <- struct{}{}:
			continue
		case <-t.C:
		case <-ctx.Done():
		}
		l.release(lanes[:i])
		return false
	}
	return true
}

// release frees the slots of a request whose work has ended (not merely
// been answered: a request past its deadline keeps its slots until its
// goroutine returns, so abandoned work still counts against the cap).
func (l *limiter) release(lanes []chan struct{}) {
	if l.slots != nil {
		for _, lane := range lanes {
			<-lane
		}
	}
	l.done()
}

// done ends a request; the last one of a burst hands the memory it used
// back to the OS, a second later if nothing else has started by then.
// Go's scavenger would return it too, but over minutes: a process that
// keeps a burst's peak looks like a leak to the orchestrator and leaves
// less room for the next burst.
func (l *limiter) done() {
	if l.inflight.Add(-1) != 0 || !l.dirty.Load() {
		return
	}
	if !l.freeing.CompareAndSwap(false, true) {
		return
	}
	time.AfterFunc(time.Second, func() {
		defer l.freeing.Store(false)
		if l.inflight.Load() != 0 || time.Since(time.Unix(0, l.lastFree.Load())) < 5*time.Second {
			return
		}
		l.dirty.Store(false)
		l.lastFree.Store(time.Now().UnixNano())
		debug.FreeOSMemory()
	})
}

// freeThreshold is the response size from which a request counts as part
// of a burst worth handing memory back after.
const freeThreshold = 1 << 20

// run executes the request in its own goroutine under the deadline and
// answers with what it wrote, or with an error when the deadline, the
// response ceiling or a canceled client ends it first.
func (l *limiter) run(w http.ResponseWriter, r *http.Request, sse bool, lanes []chan struct{}) {
	ctx, cancel := context.WithCancelCause(r.Context())
	if l.timeout > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithTimeoutCause(ctx, l.timeout, errDeadline)
		defer stop()
	}
	defer cancel(nil)
	buf := &boundedWriter{header: http.Header{}, body: bodies.Get().(*bytes.Buffer), max: l.maxBytes, over: func() { cancel(errTooLarge) }}
	ctx = withBudget(ctx, l.maxBytes, func() { cancel(errTooLarge) })
	finished := make(chan struct{})
	go func() {
		defer l.release(lanes)
		defer close(finished)
		l.next.ServeHTTP(buf, r.WithContext(ctx))
	}()
	select {
	case <-finished:
	case <-ctx.Done():
	}
	buf.mu.Lock()
	defer buf.mu.Unlock()
	buf.closed = true // late writes of an abandoned request go nowhere
	if buf.size() > freeThreshold {
		l.dirty.Store(true)
	}
	switch cause := context.Cause(ctx); {
	case r.Context().Err() != nil:
		return // the client is gone
	case cause == errTooLarge || buf.overflow:
		l.dirty.Store(true)
		writeLimitError(w, sse, http.StatusOK, gqlguard.CodeComplexity,
			fmt.Sprintf("the response exceeded %d bytes and was stopped: ask for fewer or smaller pages", l.maxBytes))
	case cause == errDeadline && (!isDone(finished) || bytes.Equal(bytes.TrimSpace(buf.body.Bytes()), []byte("null"))):
		writeLimitError(w, sse, http.StatusGatewayTimeout, string(social.Internal),
			fmt.Sprintf("the request took longer than %s and was stopped", l.timeout))
	default:
		buf.writeTo(w)
	}
	if buf.body.Cap() <= maxPooledBody {
		buf.body.Reset()
		bodies.Put(buf.body)
	}
	buf.body = nil // closed: no late write reaches it
}

// bodies are response buffers passed from one request to the next: a
// timeline page's response would otherwise grow a new buffer from
// nothing, copying as it doubles (about 17 KB of the 180 KB a reference
// page allocated). Larger buffers are left to the GC, so that a burst of
// large responses does not stay in the pool.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 256 << 10

func isDone(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

var (
	errDeadline = gqlerror.Errorf("the request ran out of time")
	errTooLarge = gqlerror.Errorf("the response is too large")
)

// boundedWriter buffers a response up to max bytes; past them it drops
// the body and records the overflow.
type boundedWriter struct {
	mu       sync.Mutex
	header   http.Header
	status   int
	body     *bytes.Buffer
	max      int
	overflow bool
	closed   bool
	over     func()
}

func (b *boundedWriter) Header() http.Header { return b.header }

func (b *boundedWriter) WriteHeader(status int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status == 0 {
		b.status = status
	}
}

func (b *boundedWriter) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.status == 0 {
		b.status = http.StatusOK
	}
	if b.closed || b.overflow {
		return 0, errTooLarge
	}
	// Room for the JSON around the data: errors, extensions.
	if b.max > 0 && b.body.Len()+len(p) > b.max+64<<10 {
		b.overflow = true
		b.body = new(bytes.Buffer) // the large one goes to the GC
		b.over()
		return 0, errTooLarge
	}
	return b.body.Write(p)
}

// Flush is a no-op: a query over SSE is answered whole, once done.
func (b *boundedWriter) Flush() {}

func (b *boundedWriter) size() int { return b.body.Len() }

// writeTo sends the buffered response, made conformant to
// GraphQL-over-HTTP where gqlgen is not: a request error (the document
// did not parse or validate, its variables did not coerce) has no data
// entry, and is status 200 for application/json (gqlgen says 422).
func (b *boundedWriter) writeTo(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	status, body := b.status, b.body.Bytes()
	if status == 0 {
		status = http.StatusOK
	}
	if status == http.StatusUnprocessableEntity || status == http.StatusBadRequest {
		var resp map[string]json.RawMessage
		if json.Unmarshal(body, &resp) == nil && resp["errors"] != nil && (resp["data"] == nil || string(resp["data"]) == "null") {
			delete(resp, "data")
			if out, err := json.Marshal(resp); err == nil {
				body = out
			}
			if status == http.StatusUnprocessableEntity && strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
				status = http.StatusOK
			}
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
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

// budget counts the bytes of the fields a response has resolved so far,
// so that an oversized response stops being built, not only sent.
type budget struct {
	used atomic.Int64
	max  int64
	over func()
}

type budgetKey struct{}

func withBudget(ctx context.Context, max int, over func()) context.Context {
	if max <= 0 {
		return ctx
	}
	return context.WithValue(ctx, budgetKey{}, &budget{max: int64(max), over: over})
}

// boundFields is the field middleware that makes CPU-bound execution
// check its context: once the request is past its deadline or over its
// response budget, every remaining field ends at once instead of resolving
// (and, in a list, instead of resolving each item).
func boundFields(ctx context.Context, next graphql.Resolver) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, stopped(ctx)
	}
	res, err := next(ctx)
	if b, ok := ctx.Value(budgetKey{}).(*budget); ok {
		n := int64(16)
		if s, ok := res.(string); ok {
			n += int64(len(s))
		} else if s, ok := res.(*string); ok && s != nil {
			n += int64(len(*s))
		}
		if b.used.Add(n) > b.max {
			b.over()
			return nil, stopped(ctx)
		}
	}
	return res, err
}

// stopped is the error of a field left unresolved: the response it
// belongs to is replaced by the limiter's error, so it is never seen over
// HTTP; over a websocket it says why the operation ended.
func stopped(ctx context.Context) error {
	if context.Cause(ctx) == errTooLarge {
		return &gqlerror.Error{Message: "the response is too large", Extensions: map[string]any{"code": gqlguard.CodeComplexity}}
	}
	return &social.Error{Code: social.Internal, Message: "the request ran out of time"}
}

// operationDeadline bounds queries and mutations that arrive without a
// deadline (over a websocket: HTTP requests have theirs from the limiter).
func operationDeadline(d time.Duration) graphql.OperationMiddleware {
	return func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		oc := graphql.GetOperationContext(ctx)
		if _, has := ctx.Deadline(); has || d <= 0 || oc.Operation == nil || oc.Operation.Operation == ast.Subscription {
			return next(ctx)
		}
		ctx, cancel := context.WithTimeoutCause(ctx, d, errDeadline)
		h := next(ctx)
		first := true
		return func(rctx context.Context) *graphql.Response {
			defer cancel()
			resp := h(ctx)
			// Only in place of the first response: later calls ask whether
			// there is another, and nil ends the operation.
			wasFirst := first
			first = false
			if resp == nil && wasFirst && context.Cause(ctx) == errDeadline {
				return &graphql.Response{Errors: gqlerror.List{{
					Message:    fmt.Sprintf("the request took longer than %s and was stopped", d),
					Extensions: map[string]any{"code": string(social.Internal)},
				}}}
			}
			return resp
		}
	}
}

// smallOnly is a cache that keeps only entries whose size is at most
// maxCachedDocument bytes.
type smallOnly[T any] struct {
	graphql.Cache[T]
	size func(key string, v T) int
}

// maxCachedDocument is the largest document the query and persisted-query
// caches keep: 1000 entries of it stay within a few tens of megabytes,
// and ordinary documents are far smaller (the reference query is 400
// bytes).
const maxCachedDocument = 8 << 10

func (c smallOnly[T]) Add(ctx context.Context, key string, v T) {
	if c.size(key, v) <= maxCachedDocument {
		c.Cache.Add(ctx, key, v)
	}
}
