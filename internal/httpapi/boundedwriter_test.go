package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"
)

func TestBoundedWriter(t *testing.T) {
	over := 0
	b := newBoundedWriter(10, func() { over++ })
	b.Header().Set("Content-Type", "application/json")
	b.WriteHeader(201)
	b.WriteHeader(500) // the first status stays
	if _, err := b.Write([]byte(`{"data":1}`)); err != nil {
		t.Fatal(err)
	}
	w := httptest.NewRecorder()
	b.writeTo(w)
	if w.Code != 201 || w.Body.String() != `{"data":1}` || w.Header().Get("Content-Length") != "10" || w.Header().Get("Content-Type") != "application/json" {
		t.Errorf("got %d %v %q", w.Code, w.Header(), w.Body)
	}
	// Past the bound and the room for errors around it, the body is
	// dropped, over is called once, and later writes fail.
	if _, err := b.Write([]byte(strings.Repeat("x", 64<<10+1))); err == nil || over != 1 || !b.overflow || b.size() != 0 {
		t.Errorf("err %v, over %d, overflow %v, size %d", err, over, b.overflow, b.size())
	}
	if _, err := b.Write([]byte("y")); err == nil || over != 1 {
		t.Errorf("a write after the overflow: err %v, over %d", err, over)
	}
}
