package httpapi

import (
	"bytes"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/socialgw/gateway/internal/operation"
)

// boundedWriter buffers a response up to max bytes; past them it drops
// the body, records the overflow and calls over.
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

// bodies are response buffers passed from one request to the next: a
// timeline page's response would otherwise grow a new buffer from
// nothing, copying as it doubles (about 17 KB of the 180 KB a reference
// page allocated). Larger buffers are left to the GC, so that a burst of
// large responses does not stay in the pool.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 256 << 10

func newBoundedWriter(max int, over func()) *boundedWriter {
	return &boundedWriter{header: http.Header{}, body: bodies.Get().(*bytes.Buffer), max: max, over: over}
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
		return 0, operation.ErrTooLarge
	}
	// Room for the JSON around the data: errors, extensions.
	if b.max > 0 && b.body.Len()+len(p) > b.max+64<<10 {
		b.overflow = true
		b.body = new(bytes.Buffer) // the large one goes to the GC
		b.over()
		return 0, operation.ErrTooLarge
	}
	return b.body.Write(p)
}

// Flush is a no-op: a query over SSE is answered whole, once done.
func (b *boundedWriter) Flush() {}

func (b *boundedWriter) size() int { return b.body.Len() }

// writeTo sends the buffered response as it was written, with its length.
// The request's execution slots went back when it executed; a client that
// does not read its answer holds the buffer for at most the write
// deadline of a socket's message, then its connection is closed.
func (b *boundedWriter) writeTo(w http.ResponseWriter) {
	rc := http.NewResponseController(w)
	if rc.SetWriteDeadline(time.Now().Add(socketWriteTimeout)) == nil {
		// The server sets none of its own (subscriptions stay open): the
		// next request on the connection starts without one.
		defer func() { _ = rc.SetWriteDeadline(time.Time{}) }()
	}
	for k, v := range b.header {
		w.Header()[k] = v
	}
	status := b.status
	if status == 0 {
		status = http.StatusOK
	}
	w.Header().Set("Content-Length", strconv.Itoa(b.body.Len()))
	w.WriteHeader(status)
	// All but the last few KiB reach the connection here, under the
	// deadline; the server writes the rest once the handler returns.
	_, _ = w.Write(b.body.Bytes())
}

// recycle hands the buffer back to the pool once the response is sent
// (the writer is closed: no late write reaches it).
func (b *boundedWriter) recycle() {
	if b.body.Cap() <= maxPooledBody {
		b.body.Reset()
		bodies.Put(b.body)
	}
	b.body = nil
}
