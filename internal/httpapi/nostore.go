package httpapi

import "net/http"

// noStore marks every answer of /query as personal and typed: no cache
// keeps it (it may hold the viewer's data), and no browser sniffs a type
// other than the one it declares.
func noStore(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-store")
		h.Set("X-Content-Type-Options", "nosniff")
		next.ServeHTTP(w, r)
	})
}
