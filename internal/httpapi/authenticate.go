package httpapi

import (
	"net/http"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/social"
)

// authenticate puts the viewer of the Authorization header into the
// context. A present but invalid token is refused with 401 and a GraphQL
// error: it never degrades to an anonymous request. (Each operation of a
// websocket is authorised again by the operation gate.)
func authenticate(authn auth.Authenticator) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx, err := auth.ViewerFromHeader(r.Context(), authn, r.Header.Get("Authorization"))
			if err != nil {
				if social.ErrorCode(err) == social.Internal {
					writeDomainError(w, r, err)
					return
				}
				w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token"`)
				writeError(w, http.StatusUnauthorized, social.Unauthenticated, social.ErrorMessage(err))
				return
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}
