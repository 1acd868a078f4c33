package httpapi

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
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
			readParams(1024, newBodyBudget(0), uploadCheck{})(next).ServeHTTP(w, r)
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

// The body budget refuses a body that would pass it, and gives back what
// a decoded body reserved.
func TestBodyBudget(t *testing.T) {
	budget := newBodyBudget(100)
	h := readParams(1024, budget, uploadCheck{})(&ok{})
	post := func(body string) int {
		r := httptest.NewRequest("POST", "/query", strings.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	if got := post(`{"query":"{ a }", "pad": "` + strings.Repeat("x", 200) + `"}`); got != http.StatusServiceUnavailable {
		t.Errorf("a body over the budget: %d, want 503", got)
	}
	for i := range 3 {
		if got := post(`{"query":"{ a }"}`); got != http.StatusOK {
			t.Fatalf("body %d within the budget: %d, want 200", i, got)
		}
	}
	if budget.left.Load() != 100 {
		t.Errorf("budget left %d after the bodies were decoded, want 100", budget.left.Load())
	}
}
