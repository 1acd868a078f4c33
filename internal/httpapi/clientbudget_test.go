package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/socialgw/gateway/internal/clientaddr"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/social"
)

// budgetOf refuses every request over its first n, telling the client to
// wait 7 s; it counts the checks.
type budgetOf struct {
	mu     sync.Mutex
	n      int
	checks int
}

func (b *budgetOf) Has(string) bool { return true }
func (b *budgetOf) Allow(context.Context, string, string) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.checks++
	if b.n--; b.n < 0 {
		return &social.Error{Code: social.RateLimited, Message: "slow down", RetryAfter: 7e9}
	}
	return nil
}

func (b *budgetOf) set(n int) {
	b.mu.Lock()
	b.n = n
	b.mu.Unlock()
}

// serveFrom runs one request of the client at addr through h.
func serveFrom(h http.Handler, addr string) (*httptest.ResponseRecorder, *ok) {
	next := &ok{}
	w := httptest.NewRecorder()
	r := httptest.NewRequest(http.MethodGet, "/media/x/y", nil)
	r.RemoteAddr = addr + ":1234"
	h.ServeHTTP(w, r)
	return w, next
}

func TestClientBudget(t *testing.T) {
	h := ClientBudget(&budgetOf{n: 1}, nil, ratelimit.NewTarpit())
	for i, want := range []int{200, 429} {
		next := &ok{}
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodGet, "/media/x/y", nil)
		r.RemoteAddr = "192.0.2.7:1234"
		h(next).ServeHTTP(w, r)
		if w.Code != want || next.ran != (want == 200) {
			t.Fatalf("request %d: status %d, ran %v; want %d", i, w.Code, next.ran, want)
		}
		if want == 200 && clientaddr.From(next.r.Context()) != "192.0.2.7" {
			t.Errorf("client address %q, want 192.0.2.7", clientaddr.From(next.r.Context()))
		}
		if want == 429 && w.Header().Get("Retry-After") != "7" {
			t.Errorf("Retry-After %q, want 7", w.Header().Get("Retry-After"))
		}
	}
}

// TestClientBudgetTarpit: a client that keeps sending while refused gets
// its first refusals at once, then each one after ratelimit.MaxHold
// (its wait is 7 s), checked against the budget only then; another
// client is answered at once; past the bounds on held requests the
// refusal closes the connection. On synctest's clock.
func TestClientBudgetTarpit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &budgetOf{n: 1}
		tp := ratelimit.NewTarpit()
		h := ClientBudget(b, nil, tp)(&ok{})
		serveFrom(h, "192.0.2.7")
		for i := range ratelimit.TarpitGrace {
			start := time.Now()
			if w, _ := serveFrom(h, "192.0.2.7"); w.Code != 429 || time.Since(start) != 0 {
				t.Fatalf("refusal %d: %d after %v, want 429 at once", i, w.Code, time.Since(start))
			}
		}
		checks := b.checks
		start := time.Now()
		w, _ := serveFrom(h, "192.0.2.7")
		if w.Code != 429 || time.Since(start) != ratelimit.MaxHold || w.Header().Get("Connection") != "" {
			t.Errorf("past the grace: %d %v after %v, want 429 after %v", w.Code, w.Header(), time.Since(start), ratelimit.MaxHold)
		}
		if b.checks != checks+1 {
			t.Errorf("%d budget checks for a held request, want 1, after its hold", b.checks-checks)
		}
		b.set(1 << 30)
		start = time.Now()
		if w, _ := serveFrom(h, "192.0.2.8"); w.Code != 200 || time.Since(start) != 0 {
			t.Errorf("another client: %d after %v, want 200 at once", w.Code, time.Since(start))
		}

		// The client's held requests fill its place in the tarpit.
		b.set(0)
		var wg sync.WaitGroup
		for range ratelimit.TarpitPerClient {
			wg.Go(func() { serveFrom(h, "192.0.2.7") })
		}
		synctest.Wait()
		w, _ = serveFrom(h, "192.0.2.7")
		if w.Code != 429 || w.Header().Get("Connection") != "close" {
			t.Errorf("past the bound on held requests: %d %v, want 429 and Connection: close", w.Code, w.Header())
		}
		wg.Wait()
	})
}
