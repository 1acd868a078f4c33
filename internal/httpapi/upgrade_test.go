package httpapi

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestUpgrades(t *testing.T) {
	ws := func(h map[string]string) map[string]string {
		out := map[string]string{"Upgrade": "websocket", "Connection": "Upgrade", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": "k"}
		for k, v := range h {
			out[k] = v
		}
		return out
	}
	allowed := func(r *http.Request) bool { return r.Header.Get("Origin") == "https://app.example" }
	for _, tc := range []struct {
		name   string
		method string
		header map[string]string
		status int    // 0: passed on
		to     string // "http" or "ws"
	}{
		{"no upgrade", "POST", nil, 0, "http"},
		{"websocket", "GET", ws(nil), 0, "ws"},
		{"same origin", "GET", ws(map[string]string{"Origin": "http://gw.example"}), 0, "ws"},
		{"allowed origin", "GET", ws(map[string]string{"Origin": "https://app.example"}), 0, "ws"},
		{"other origin", "GET", ws(map[string]string{"Origin": "https://evil.example"}), 403, ""},
		{"same host over another scheme", "GET", ws(map[string]string{"Origin": "file://gw.example"}), 403, ""},
		{"http page behind TLS", "GET", ws(map[string]string{"Origin": "http://gw.example", "X-Forwarded-Proto": "https"}), 403, ""},
		{"not websocket", "GET", map[string]string{"Upgrade": "h2c"}, 400, ""},
		{"POST upgrade", "POST", ws(nil), 400, ""},
		{"no key", "GET", ws(map[string]string{"Sec-WebSocket-Key": ""}), 400, ""},
		{"no Connection: upgrade", "GET", ws(map[string]string{"Connection": "keep-alive"}), 400, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			httpNext, wsNext := &ok{}, &ok{}
			r := httptest.NewRequest(tc.method, "http://gw.example/query", nil)
			for k, v := range tc.header {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			upgrades(allowed, wsNext)(httpNext).ServeHTTP(w, r)
			to := ""
			if httpNext.ran {
				to = "http"
			} else if wsNext.ran {
				to = "ws"
			}
			if to != tc.to || (tc.status != 0 && w.Code != tc.status) {
				t.Errorf("went to %q with status %d, want %q and %d", to, w.Code, tc.to, tc.status)
			}
		})
	}
}
