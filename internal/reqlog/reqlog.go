// Package reqlog gives each request an id and a logger that carries it, so
// every line logged for a request, in any package, can be found together.
package reqlog

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"regexp"
)

type ctxKey struct{}

// Header is the request-id header, read from trusted proxies and echoed.
const Header = "X-Request-Id"

var validID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

// Middleware puts a request id and a logger carrying it into the context.
func Middleware(base *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(Header)
		if !validID.MatchString(id) {
			id = newID()
		}
		w.Header().Set(Header, id)
		next.ServeHTTP(w, r.WithContext(WithLogger(r.Context(), base.With("request_id", id))))
	})
}

// WithLogger returns ctx carrying l as the request's logger.
func WithLogger(ctx context.Context, l *slog.Logger) context.Context {
	return context.WithValue(ctx, ctxKey{}, l)
}

// Logger returns the request's logger, or slog.Default outside a request.
func Logger(ctx context.Context) *slog.Logger {
	if l, ok := ctx.Value(ctxKey{}).(*slog.Logger); ok {
		return l
	}
	return slog.Default()
}

func newID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
