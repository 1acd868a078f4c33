package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// ok is the handler behind the middleware under test: it records that it
// ran and the request it got.
type ok struct {
	ran bool
	r   *http.Request
}

func (h *ok) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.ran, h.r = true, r }

func TestNoStore(t *testing.T) {
	w := httptest.NewRecorder()
	next := &ok{}
	noStore(next).ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/query", nil))
	if !next.ran || w.Header().Get("Cache-Control") != "no-store" || w.Header().Get("X-Content-Type-Options") != "nosniff" {
		t.Errorf("ran %v, headers %v; want no-store and nosniff", next.ran, w.Header())
	}
}
