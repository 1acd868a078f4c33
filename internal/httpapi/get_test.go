package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestGetParams(t *testing.T) {
	for _, tc := range []struct {
		name, query string
		status      int // 0: decoded
		want        string
	}{
		{"query", "query=%7B__typename%7D", 0, "{__typename}"},
		{"repeated query", "query=%7Ba%7D&query=%7Bb%7D", 400, ""},
		{"repeated operationName", "query=%7Ba%7D&operationName=A&operationName=B", 400, ""},
		{"repeated variables", "query=%7Ba%7D&variables=%7B%7D&variables=%7B%7D", 400, ""},
		{"repeated extensions", "query=%7Ba%7D&extensions=%7B%7D&extensions=%7B%7D", 400, ""},
		{"another parameter repeated", "query=%7Ba%7D&x=1&x=2", 0, "{a}"},
		{"bad escape", "query=%7Ba%7D&x=%zz", 400, ""},
		{"variables not an object", "query=%7Ba%7D&variables=%5B1%5D", 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, f := getParams(httptest.NewRequest(http.MethodGet, "/query?"+tc.query, nil))
			switch {
			case tc.status == 0 && (f != nil || p.raw.Query != tc.want):
				t.Errorf("refused %+v, or query %q; want %q", f, p.raw.Query, tc.want)
			case tc.status != 0 && (f == nil || f.status != tc.status || f.code != "BAD_USER_INPUT"):
				t.Errorf("refusal %+v, want %d BAD_USER_INPUT", f, tc.status)
			}
		})
	}
}
