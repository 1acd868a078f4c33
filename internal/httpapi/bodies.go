package httpapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/socialgw/gateway/internal/social"
)

// bodyBudget is the memory that request bodies being read may hold
// (Options.MaxBodyMemory): POST bodies, and the operations and map parts
// of multipart requests. A body holds what its buffer has grown to as its
// bytes arrived, never what its Content-Length announces, so a client
// that announces a megabyte and sends a byte holds a few hundred bytes.
// One client address holds at most a share of it (an eighth, and at
// least one body of the largest size), so that a few addresses cannot
// take it all: it takes nine full shares, nine addresses each sending
// bodies at once, to leave another address without room.
type bodyBudget struct {
	total, share int64

	mu   sync.Mutex
	used int64
	held map[string]int64 // by client address
}

// defaultBodyMemory is MaxBodyMemory's default: 64 bodies of the default
// MAX_BODY_BYTES at once.
const defaultBodyMemory = 64 << 20

// bodyShares is how many client addresses it takes to fill the budget
// with their shares.
const bodyShares = 8

// newBodyBudget returns a budget of n bytes (0: defaultBodyMemory) for
// bodies of at most maxBody bytes.
func newBodyBudget(n, maxBody int64) *bodyBudget {
	if n <= 0 {
		n = defaultBodyMemory
	}
	return &bodyBudget{total: n, share: min(n, max(n/bodyShares, maxBody)), held: map[string]int64{}}
}

var (
	errBodiesFull = errors.New("the body budget is full")
	errShareFull  = errors.New("the client's share of the body budget is full")
	errBodyLarger = errors.New("the body is larger than its bound")
)

// bodyHold is what one request's bodies hold of the budget, for its
// client address.
type bodyHold struct {
	b      *bodyBudget
	client string
	n      int64
}

func (b *bodyBudget) hold(client string) *bodyHold { return &bodyHold{b: b, client: client} }

// grow reserves n more bytes, or says why they are not there.
func (h *bodyHold) grow(n int64) error {
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.held[h.client]+n > b.share:
		return errShareFull
	case b.used+n > b.total:
		return errBodiesFull
	}
	b.used += n
	b.held[h.client] += n
	h.n += n
	return nil
}

// release gives back all that the hold reserved.
func (h *bodyHold) release() {
	b := h.b
	b.mu.Lock()
	defer b.mu.Unlock()
	b.used -= h.n
	if b.held[h.client] -= h.n; b.held[h.client] <= 0 {
		delete(b.held, h.client)
	}
	h.n = 0
}

// firstBodyBuffer is the buffer a body starts with, the most a body that
// has sent one byte holds.
const firstBodyBuffer = 512

// readBody reads a body of at most limit bytes (length: its announced
// Content-Length, -1 for none) into a buffer that doubles as its bytes
// arrive, up to the announced length, each growth reserved in h before it
// is made: a body holds at most twice what it has sent, plus
// firstBodyBuffer. More than limit bytes is errBodyLarger.
func readBody(body io.Reader, length, limit int64, h *bodyHold) ([]byte, error) {
	if length >= 0 && length < limit {
		limit = length
	}
	var buf []byte
	for {
		if len(buf) == cap(buf) {
			if int64(cap(buf)) == limit {
				// Full: only the end of the body may follow.
				var one [1]byte
				n, err := io.ReadFull(body, one[:])
				switch {
				case n > 0:
					return nil, errBodyLarger
				case errors.Is(err, io.EOF):
					return buf, nil
				}
				return nil, err
			}
			size := min(limit, max(2*int64(cap(buf)), firstBodyBuffer))
			if err := h.grow(size - int64(cap(buf))); err != nil {
				return nil, err
			}
			buf = append(make([]byte, 0, size), buf...)
		}
		n, err := body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if errors.Is(err, io.EOF) {
			return buf, nil
		}
		if err != nil {
			return nil, err
		}
	}
}

// bodyRefusal answers a body that could not be read: too large (413),
// too slow (408, bodyPace), over the budget (503) or over the client's
// share of it (429), or cut short (400). what names the body ("request
// body", "operations part"), bound its largest size.
func bodyRefusal(err error, what string, bound int64) *refusal {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.Is(err, errBodyLarger) || errors.As(err, &tooLarge):
		return refuse(http.StatusRequestEntityTooLarge, fmt.Sprintf("%s too large (at most %d bytes)", what, bound))
	case errors.As(err, new(tooSlow)):
		return refuse(http.StatusRequestTimeout, err.Error()).with("Connection", "close")
	case errors.Is(err, errBodiesFull):
		return &refusal{status: http.StatusServiceUnavailable, code: social.RateLimited,
			msg: "the server is reading as many request bodies as it can hold: retry shortly", header: map[string]string{"Retry-After": "1"}}
	case errors.Is(err, errShareFull):
		return &refusal{status: http.StatusTooManyRequests, code: social.RateLimited,
			msg: "this address is sending as many request bodies at once as it may: retry once they are read", header: map[string]string{"Retry-After": "1"}}
	}
	return refuse(http.StatusBadRequest, "could not read the "+what)
}
