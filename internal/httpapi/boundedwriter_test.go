package httpapi

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"
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
	w := &deadlineRecorder{ResponseRecorder: httptest.NewRecorder()}
	b.writeTo(w)
	// The body is written under a deadline, cleared once it is written.
	if len(w.deadlines) != 2 || !w.deadlines[0].After(time.Now()) || !w.deadlines[1].IsZero() {
		t.Errorf("write deadlines %v, want one in the future, then none", w.deadlines)
	}
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

// deadlineRecorder records the write deadlines set on it.
type deadlineRecorder struct {
	*httptest.ResponseRecorder
	deadlines []time.Time
}

func (r *deadlineRecorder) SetWriteDeadline(t time.Time) error {
	r.deadlines = append(r.deadlines, t)
	return nil
}
