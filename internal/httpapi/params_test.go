package httpapi

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/socialgw/gateway/internal/clientaddr"
)

// readParams dispatches on the method and media type, and passes on the
// decoded parameters; what it refuses never reaches the next handler.
func TestReadParams(t *testing.T) {
	for _, tc := range []struct {
		name, method, contentType, body, query string
		status                                 int // 0: passed on
		allow                                  string
	}{
		{"POST JSON", "POST", "application/json", `{"query":"{ a }"}`, "", 0, ""},
		{"POST JSON with a charset", "POST", "application/json; charset=utf-8", `{"query":"{ a }"}`, "", 0, ""},
		{"GET", "GET", "", "", "query=%7B+a+%7D", 0, ""},
		{"POST persisted query by hash", "POST", "application/json", `{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"ab"}}}`, "", 0, ""},
		{"PUT", "PUT", "application/json", `{"query":"{ a }"}`, "", 405, "GET, POST"},
		{"form", "POST", "application/x-www-form-urlencoded", "query=%7B+a+%7D", "", 415, ""},
		{"text", "POST", "text/plain", `{"query":"{ a }"}`, "", 415, ""},
		{"no query", "POST", "application/json", `{"variables":{}}`, "", 400, ""},
		{"GET without a query", "GET", "", "", "", 400, ""},
		{"multipart without the preflight header", "POST", "multipart/form-data; boundary=x", "--x--", "", 400, ""},
		{"body over the limit", "POST", "application/json", `{"query":"{ a }", "pad": "` + strings.Repeat("x", 2048) + `"}`, "", 413, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next := &ok{}
			r := httptest.NewRequest(tc.method, "/query?"+tc.query, strings.NewReader(tc.body))
			if tc.contentType != "" {
				r.Header.Set("Content-Type", tc.contentType)
			}
			w := httptest.NewRecorder()
			readParams(1024, newBodyBudget(0, 1024), bodyPace{}, uploadCheck{})(next).ServeHTTP(w, r)
			if tc.status == 0 {
				if !next.ran || paramsFrom(next.r.Context()) == nil {
					t.Fatalf("status %d (%s): not passed on with parameters", w.Code, w.Body)
				}
				return
			}
			if next.ran || w.Code != tc.status || !strings.Contains(w.Body.String(), `"BAD_USER_INPUT"`) {
				t.Fatalf("ran %v, status %d (%s); want %d BAD_USER_INPUT", next.ran, w.Code, w.Body, tc.status)
			}
			if w.Header().Get("Allow") != tc.allow {
				t.Errorf("Allow %q, want %q", w.Header().Get("Allow"), tc.allow)
			}
		})
	}
}

// The body budget refuses a body that would pass it, or its client's
// share, and gives back what a decoded body reserved.
func TestBodyBudget(t *testing.T) {
	budget := newBodyBudget(1000, 100) // a share of 125
	h := readParams(1024, budget, bodyPace{}, uploadCheck{})(&ok{})
	post := func(client, body string) int {
		r := httptest.NewRequest("POST", "/query", strings.NewReader(body))
		r = r.WithContext(clientaddr.With(r.Context(), client))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	big := `{"query":"{ a }", "pad": "` + strings.Repeat("x", 200) + `"}`
	if got := post("a", big); got != http.StatusTooManyRequests {
		t.Errorf("a body over the client's share: %d, want 429", got)
	}
	// Eight others hold all of the budget.
	var last *bodyHold
	for _, c := range []string{"b", "c", "d", "e", "f", "g", "h", "i"} {
		if last = budget.hold(c); last.grow(125) != nil {
			t.Fatal("no room for", c)
		}
	}
	if got := post("a", `{"query":"{ a }"}`); got != http.StatusServiceUnavailable {
		t.Errorf("a body over the budget: %d, want 503", got)
	}
	last.release() // i's body was decoded
	for i := range 3 {
		if got := post("a", `{"query":"{ a }"}`); got != http.StatusOK {
			t.Fatalf("body %d within the budget: %d, want 200", i, got)
		}
	}
	if budget.used != 7*125 || len(budget.held) != 7 {
		t.Errorf("budget used %d by %d clients after the bodies were decoded, want %d by 7", budget.used, len(budget.held), 7*125)
	}
}

// readBody reserves as bytes arrive, never more than twice what came
// plus its first buffer, and never more than the announced length.
func TestReadBodyReserves(t *testing.T) {
	for _, tc := range []struct {
		name          string
		size          int   // bytes sent
		length, limit int64 // Content-Length (-1: none), bound
		wantHeld      int64 // reserved once read
		wantErr       error
	}{
		{"tiny, announced", 30, 30, 1 << 20, 30, nil},
		{"tiny, unannounced", 30, -1, 1 << 20, firstBodyBuffer, nil},
		{"announced exactly", 5000, 5000, 1 << 20, 5000, nil},
		{"unannounced, doubled", 5000, -1, 1 << 20, 8192, nil},
		{"a megabyte announced, one byte sent", 1, 1 << 20, 1 << 20, firstBodyBuffer, io.ErrUnexpectedEOF},
		{"at the bound", 4096, -1, 4096, 4096, nil},
		{"past the bound", 4097, -1, 4096, 4096, errBodyLarger},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newBodyBudget(1<<30, 1<<30).hold("a")
			var body io.Reader = iotest.HalfReader(strings.NewReader(strings.Repeat("x", tc.size)))
			if tc.length > int64(tc.size) {
				body = &shortBody{body}
			}
			got, err := readBody(body, tc.length, tc.limit, h)
			if !errors.Is(err, tc.wantErr) || (err == nil && len(got) != tc.size) {
				t.Fatalf("read %d bytes, err %v; want %d, %v", len(got), err, tc.size, tc.wantErr)
			}
			if h.n != tc.wantHeld || h.n > 2*int64(tc.size)+firstBodyBuffer {
				t.Errorf("held %d, want %d", h.n, tc.wantHeld)
			}
		})
	}
}

// shortBody ends before its announced length, as a connection closed
// mid-body does.
type shortBody struct{ io.Reader }

func (b *shortBody) Read(p []byte) (int, error) {
	n, err := b.Reader.Read(p)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return n, err
}
