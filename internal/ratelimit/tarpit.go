package ratelimit

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/socialgw/gateway/internal/social"
)

// Tarpit slows down a client that keeps sending while it is refused.
// A refusal tells the client when to come back (Retry-After); a client
// that ignores it would otherwise get every refusal at once and send the
// next request straight away, thousands a second, each costing the
// process a request to parse and answer on the cores its other clients
// need. The tarpit remembers, per client, until when its last refusal
// said to wait (Refused); past the first few refusals of that wait, its
// next requests are held (Hold) until the wait ends, at most MaxHold,
// before they are checked again. An HTTP/1.1 client sends its next
// request on a connection only once the answer came, so holding the
// answer throttles it at its source; a websocket whose read loop is held
// is held back by TCP. Well-behaved clients never meet it: they come back
// once the wait is over.
//
// What is held is bounded: at most TarpitPerClient requests of one
// client and TarpitHeld in all. Past that Hold does not wait and tells
// the caller to close the connection instead, which costs the client a
// new connection and the process nothing it would keep.
type Tarpit struct {
	mu      sync.Mutex
	clients map[string]*window
	held    int
}

// window is one client's: until when it was told to wait, how many
// times it was refused since, how many of its requests are held.
type window struct {
	until          time.Time
	refusals, held int
}

// The tarpit's bounds.
const (
	// TarpitGrace is the refusals of one wait answered at once: a
	// browser's few parallel requests all get theirs promptly.
	TarpitGrace = 8
	// MaxHold bounds how long one request is held.
	MaxHold = 5 * time.Second
	// TarpitPerClient bounds the requests of one client held at once.
	TarpitPerClient = 8
	// TarpitHeld bounds the requests held at once, all clients together.
	TarpitHeld = 1024
	// TarpitQuiet is how long past its wait a client must have sent
	// nothing refused for its next refusals to be answered at once again:
	// a client held until its wait ends and refused straight after is
	// still the client that would not wait.
	TarpitQuiet = time.Second
	// tarpitClients bounds the clients remembered: past it the expired
	// windows are dropped, and all of them if none has expired.
	tarpitClients = 100_000
)

// NewTarpit returns an empty tarpit.
func NewTarpit() *Tarpit { return &Tarpit{clients: map[string]*window{}} }

// Refused records that subject was refused and told to wait.
func (t *Tarpit) Refused(subject string, wait time.Duration) {
	if t == nil || wait <= 0 {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.clients[subject]
	if w == nil {
		if len(t.clients) >= tarpitClients {
			t.sweep(now)
		}
		w = &window{}
		t.clients[subject] = w
	}
	if now.Sub(w.until) >= TarpitQuiet {
		w.refusals = 0 // it stayed away past its wait: a new start
	}
	w.until = later(w.until, now.Add(wait))
	w.refusals++
}

// RefusedBy records a refusal of subject by err, when err is a
// RATE_LIMITED error that tells how long to wait (Limiter.Allow's).
func (t *Tarpit) RefusedBy(subject string, err error) {
	var e *social.Error
	if errors.As(err, &e) && e.Code == social.RateLimited {
		t.Refused(subject, e.RetryAfter)
	}
}

// Hold is called before subject's request is checked against its
// budgets. Within a wait it was told of, past TarpitGrace refusals, it
// holds the request until the wait ends (at most MaxHold) or ctx ends;
// otherwise it returns at once. It returns false, without waiting, when
// the request should have been held but the bounds on held requests are
// reached: the caller closes the connection after answering.
func (t *Tarpit) Hold(ctx context.Context, subject string) bool {
	if t == nil {
		return true
	}
	now := time.Now()
	t.mu.Lock()
	w := t.clients[subject]
	if w == nil || !now.Before(w.until) || w.refusals < TarpitGrace {
		t.mu.Unlock()
		return true
	}
	if w.held >= TarpitPerClient || t.held >= TarpitHeld {
		t.mu.Unlock()
		return false
	}
	w.held++
	t.held++
	d := min(w.until.Sub(now), MaxHold)
	t.mu.Unlock()

	timer := time.NewTimer(d)
	select {
	case <-timer.C:
	case <-ctx.Done():
		timer.Stop()
	}
	t.mu.Lock()
	w.held--
	t.held--
	t.mu.Unlock()
	return true
}

// Held is the number of requests held now.
func (t *Tarpit) Held() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.held
}

// sweep drops the windows that are over, or all when none is; a window
// whose requests are held keeps counting them (they hold its pointer).
func (t *Tarpit) sweep(now time.Time) {
	for k, w := range t.clients {
		if now.Sub(w.until) >= TarpitQuiet {
			delete(t.clients, k)
		}
	}
	if len(t.clients) >= tarpitClients {
		clear(t.clients)
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
