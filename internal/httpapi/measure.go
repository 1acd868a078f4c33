package httpapi

import (
	"net/http"
	"strings"

	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/internal/operation"
)

// measure is the middleware that measures a request's document once, with
// the operation rules' guard, before the token is read or a slot taken;
// the verdict travels in the context to the limiter and to the guard's
// gqlgen extension, which reports a refusal. A persisted query sent by its
// hash alone is looked up here, so that it is measured and classified like
// any other document; gqlgen's persisted-query extension then gets it
// from the context, not Redis.
//
// It is the one owner of what the HTTP methods may carry: GET carries
// queries only (a mutation or subscription is refused with 405 and
// Allow: POST, as GraphQL-over-HTTP asks), and multipart carries only
// mutations.
func measure(rules *operation.Rules) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p := paramsFrom(r.Context())
			ctx := operation.WithRegistration(r.Context())
			query := p.raw.Query
			if query == "" && p.hash != "" {
				ctx, query = rules.Persisted(ctx, p.hash)
			}
			v := rules.Check(query, p.raw.OperationName, p.raw.Variables)
			if f := methodRefusal(r, p, v); f != nil {
				f.write(w)
				return
			}
			next.ServeHTTP(w, r.WithContext(operation.WithVerdict(ctx, v)))
		})
	}
}

// methodRefusal refuses an operation its request cannot carry (nil when
// it can, or when the guard refused the document: gqlgen reports that).
// A subscription needs a stream: over a POST that does not accept
// text/event-stream it would be one request held open, with no deadline,
// until the first event, and then cut.
func methodRefusal(r *http.Request, p *requestParams, v *operation.Verdict) *refusal {
	const needsStream = "subscriptions need a websocket, or a POST accepting text/event-stream"
	switch op := v.Report.Operation; {
	case v.Err != nil:
		return nil
	case r.Method == http.MethodGet && op == ast.Mutation:
		return refuse(http.StatusMethodNotAllowed, "mutations must be sent with POST").with("Allow", "POST")
	case r.Method == http.MethodGet && op == ast.Subscription:
		return refuse(http.StatusMethodNotAllowed, needsStream).with("Allow", "POST")
	case p.upload != nil && op != ast.Mutation:
		return refuse(http.StatusBadRequest, "only a mutation may be sent as multipart/form-data")
	case op == ast.Subscription && !strings.Contains(r.Header.Get("Accept"), "text/event-stream"):
		return refuse(http.StatusBadRequest, needsStream)
	}
	return nil
}
