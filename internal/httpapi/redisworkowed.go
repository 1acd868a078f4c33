package httpapi

import (
	"net/http"

	"github.com/socialgw/gateway/internal/clientaddr"
	"github.com/socialgw/gateway/internal/operation"
)

// redisWorkOwed refuses, with 429 and Retry-After before the body is
// read, a request from an address whose Redis-work budget this process
// found spent (operation's Redis-work budget, ratelimit.RuleRedisWork):
// its operations would be refused anyway, and reading and checking their
// documents would be work spent for nothing. The tarpit (ClientBudget)
// learns of the refusal, so that a client that does not wait is held.
func redisWorkOwed(rules *operation.Rules) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if wait := rules.RedisWorkOwed(clientaddr.From(r.Context())); wait > 0 {
				refuseClient(w, r, rules.Tarpit(), operation.RedisWorkRefusal(wait))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}
