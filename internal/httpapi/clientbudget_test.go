package httpapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/socialgw/gateway/internal/clientaddr"
	"github.com/socialgw/gateway/internal/social"
)

// budgetOf refuses every request over its first n.
type budgetOf struct{ n int }

func (b *budgetOf) Has(string) bool { return true }
func (b *budgetOf) Allow(context.Context, string, string) error {
	if b.n--; b.n < 0 {
		return &social.Error{Code: social.RateLimited, Message: "slow down", RetryAfter: 7e9}
	}
	return nil
}

func TestClientBudget(t *testing.T) {
	h := ClientBudget(&budgetOf{n: 1}, nil)
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
