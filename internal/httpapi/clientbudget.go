package httpapi

import (
	"net/http"
	"net/netip"

	"github.com/socialgw/gateway/internal/clientaddr"
	"github.com/socialgw/gateway/internal/operation"
	"github.com/socialgw/gateway/internal/ratelimit"
)

// ClientBudget puts the client's address into the context (per-address
// login and registration limits read it) and spends one event of the
// address's request budget (ratelimit.RuleRequestIP): a request over it
// is refused as a whole, with 429 and Retry-After, before anything is
// read. /query and /media/ share the budget. l nil: no budget.
func ClientBudget(l operation.Limiter, trusted []netip.Prefix) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := clientaddr.With(r.Context(), ratelimit.ClientIP(r, trusted))
			if l != nil && l.Has(ratelimit.RuleRequestIP) {
				if err := l.Allow(ctx, ratelimit.RuleRequestIP, clientaddr.From(ctx)); err != nil {
					writeDomainError(w, r.WithContext(ctx), err)
					return
				}
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}
