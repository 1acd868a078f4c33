package httpapi

import (
	"net/http"
	"strings"

	"github.com/socialgw/gateway/internal/social"
)

// upgrades is the one place a request's Upgrade header is read: a request
// without one goes on down the HTTP chain, which never sees an upgrade; a
// well-formed websocket upgrade from an allowed origin goes to ws; any
// other request carrying an Upgrade header is answered with a coded error,
// instead of the websocket library's plain-text one. allowed decides
// cross-origin requests: the CORS allow-list, so browsers get one answer
// for fetch and for websockets.
func upgrades(allowed func(*http.Request) bool, ws http.Handler) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			up := r.Header.Get("Upgrade")
			switch {
			case up == "":
				next.ServeHTTP(w, r)
			case !strings.EqualFold(up, "websocket"):
				writeError(w, http.StatusBadRequest, social.BadUserInput, "the Upgrade header is only for websocket requests (Upgrade: websocket)")
			case r.Method != http.MethodGet || !headerHas(r.Header, "Connection", "upgrade") ||
				r.Header.Get("Sec-WebSocket-Version") != "13" || r.Header.Get("Sec-WebSocket-Key") == "":
				writeError(w, http.StatusBadRequest, social.BadUserInput,
					"a websocket upgrade must be a GET with Connection: Upgrade, Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key")
			case !sameOrigin(r) && (allowed == nil || !allowed(r)):
				writeError(w, http.StatusForbidden, social.Forbidden, "websocket connections from this origin are not allowed")
			default:
				ws.ServeHTTP(w, r)
			}
		})
	}
}

// headerHas reports whether a comma-separated header lists token.
func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for f := range strings.SplitSeq(v, ",") {
			if strings.EqualFold(strings.TrimSpace(f), token) {
				return true
			}
		}
	}
	return false
}

// sameOrigin reports a request without an Origin (not from a browser) or
// from the page's own origin: the same host, over http or https, and over
// https only when the request came over TLS (directly, or through a proxy
// that says so with X-Forwarded-Proto: the header can only tighten the
// check). An http page cannot talk to the gateway behind a TLS listener,
// nor a page of any other scheme (file:, null, an extension) at all.
func sameOrigin(r *http.Request) bool {
	o := r.Header.Get("Origin")
	if o == "" {
		return true
	}
	scheme, host, ok := strings.Cut(o, "://")
	if !ok || !strings.EqualFold(host, r.Host) {
		return false
	}
	secure := r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
	switch strings.ToLower(scheme) {
	case "https":
		return true
	case "http":
		return !secure
	}
	return false
}
