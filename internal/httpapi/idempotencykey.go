package httpapi

import (
	"net/http"

	"github.com/socialgw/gateway/internal/operation"
)

// idempotencyKey moves a request's Idempotency-Key header into its
// context, where the operation rules check and use it (operation's
// idempotency.go). A request with several such headers passes an empty
// key, which the rules refuse. Websocket upgrades never get here: each
// operation of a socket carries its own key in its extensions.
func idempotencyKey(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Values("Idempotency-Key"); len(v) > 0 {
			raw := ""
			if len(v) == 1 {
				raw = v[0]
			}
			r = r.WithContext(operation.WithIdempotencyKey(r.Context(), raw))
		}
		next.ServeHTTP(w, r)
	})
}
