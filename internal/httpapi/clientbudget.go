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
//
// A client that keeps sending while refused, ignoring Retry-After, meets
// the tarpit (ratelimit.Tarpit) first: past a few refusals its requests
// are held until its wait is over (at most ratelimit.MaxHold) before they
// are checked, so its flood is slowed where it starts and costs neither a
// Redis call nor a parsed body a request. Past the tarpit's bounds on
// held requests the answer closes the connection instead. tp nil: none.
func ClientBudget(l operation.Limiter, trusted []netip.Prefix, tp *ratelimit.Tarpit) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			addr := ratelimit.ClientIP(r, trusted)
			r = r.WithContext(clientaddr.With(r.Context(), addr))
			if !tp.Hold(r.Context(), addr) {
				// HTTP/1.1 closes after this answer, HTTP/2 sends GOAWAY.
				w.Header().Set("Connection", "close")
			}
			if r.Context().Err() != nil {
				return // the client left while held
			}
			if l != nil && l.Has(ratelimit.RuleRequestIP) {
				if err := l.Allow(r.Context(), ratelimit.RuleRequestIP, addr); err != nil {
					refuseClient(w, r, tp, err)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}
}

// refuseClient answers a request refused for its client address's budget
// and tells the tarpit how long the client was told to wait.
func refuseClient(w http.ResponseWriter, r *http.Request, tp *ratelimit.Tarpit, err error) {
	tp.RefusedBy(clientaddr.From(r.Context()), err)
	writeDomainError(w, r, err)
}
