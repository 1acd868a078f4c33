package graph

import (
	"context"
	"net/http"
	"net/netip"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/social"
)

// Limiter spends rate-limit budgets (internal/ratelimit.Limiter).
type Limiter interface {
	Allow(ctx context.Context, rule, subject string) error
	// Has reports whether a rule is limited at all.
	Has(rule string) bool
}

// clientBudget puts the client's address into the context (per-address
// login and registration limits read it) and spends one event of the
// address's request budget: a request over it is refused as a whole, with
// 429 and Retry-After, before anything is parsed.
func clientBudget(l Limiter, trusted []netip.Prefix, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := social.WithClientIP(r.Context(), ratelimit.ClientIP(r, trusted))
		if l != nil && l.Has(ratelimit.RuleRequestIP) {
			if err := l.Allow(ctx, ratelimit.RuleRequestIP, social.ClientIP(ctx)); err != nil {
				writeDomainError(w, r, err)
				return
			}
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// mutationBudget spends one event of the user's mutation budget for every
// root mutation field, so aliased copies of one mutation in a document
// count one each. Anonymous mutations (login, register, refreshToken) are
// counted per client address.
func mutationBudget(l Limiter) graphql.FieldMiddleware {
	return func(ctx context.Context, next graphql.Resolver) (any, error) {
		fc := graphql.GetFieldContext(ctx)
		if fc == nil || fc.Object != "Mutation" { // only root fields have Mutation as their object
			return next(ctx)
		}
		subject := social.ViewerID(ctx)
		if subject == "" {
			subject = "ip:" + social.ClientIP(ctx)
		}
		if err := l.Allow(ctx, ratelimit.RuleMutationUser, subject); err != nil {
			return nil, err
		}
		return next(ctx)
	}
}

// methodKey carries the HTTP method into execution.
type methodKey struct{}

// getOnlyQueries refuses a mutation or subscription that arrives over GET
// once the document is known, with a code. The body check catches a GET
// mutation written out in the URL; this catches one sent as a persisted
// query hash, whose document only the APQ cache knows (gqlgen's GET
// transport would refuse it too, but with a bare message).
type getOnlyQueries struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = getOnlyQueries{}

func (getOnlyQueries) ExtensionName() string                   { return "GetOnlyQueries" }
func (getOnlyQueries) Validate(graphql.ExecutableSchema) error { return nil }
func (getOnlyQueries) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if m, _ := ctx.Value(methodKey{}).(string); m != http.MethodGet || oc.Operation == nil || oc.Operation.Operation == ast.Query {
		return nil
	}
	msg := "mutations must be sent with POST"
	if oc.Operation.Operation == ast.Subscription {
		msg = "subscriptions need a websocket, or a POST accepting text/event-stream"
	}
	err := gqlerror.Errorf("%s", msg)
	err.Extensions = map[string]any{"code": string(social.BadUserInput)}
	return err
}

// checkUpgrade lets through only well-formed websocket upgrades from
// allowed origins and answers anything else carrying an Upgrade header
// with a coded error, instead of the websocket library's plain-text one.
// allowed decides cross-origin requests: the CORS allow-list, so browsers
// get one answer for fetch and for websockets.
func checkUpgrade(allowed func(*http.Request) bool, socks *sockets, authn auth.Authenticator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		up := r.Header.Get("Upgrade")
		if up == "" {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), methodKey{}, r.Method)))
			return
		}
		switch {
		case !strings.EqualFold(up, "websocket"):
			writeError(w, http.StatusBadRequest, social.BadUserInput, "the Upgrade header is only for websocket requests (Upgrade: websocket)")
		case r.Method != http.MethodGet || !headerHas(r.Header, "Connection", "upgrade") ||
			r.Header.Get("Sec-WebSocket-Version") != "13" || r.Header.Get("Sec-WebSocket-Key") == "":
			writeError(w, http.StatusBadRequest, social.BadUserInput,
				"a websocket upgrade must be a GET with Connection: Upgrade, Sec-WebSocket-Version: 13 and a Sec-WebSocket-Key")
		case !sameOrigin(r) && (allowed == nil || !allowed(r)):
			writeError(w, http.StatusForbidden, social.Forbidden, "websocket connections from this origin are not allowed")
		default:
			// No methodKey: the upgrade is a GET, but the operations
			// sent over the websocket are not, and getOnlyQueries must
			// let their mutations and subscriptions through.
			socks.serve(w, r, authn, next)
		}
	})
}

// headerHas reports whether a comma-separated header lists token.
func headerHas(h http.Header, name, token string) bool {
	for _, v := range h.Values(name) {
		for _, f := range strings.Split(v, ",") {
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

// noIntrospection refuses, when introspection is off, a document that
// asks for it (__schema or __type), as a validation error: gqlgen would
// run it and fail each such field with an internal error, logged.
type noIntrospection struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = noIntrospection{}

func (noIntrospection) ExtensionName() string                   { return "NoIntrospection" }
func (noIntrospection) Validate(graphql.ExecutableSchema) error { return nil }
func (noIntrospection) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if oc.Operation == nil || oc.Operation.Operation != ast.Query {
		return nil
	}
	for _, f := range collect(oc, oc.Operation.SelectionSet, "Query") {
		if f.Name == "__schema" || f.Name == "__type" {
			err := gqlerror.Errorf("introspection is disabled on this server")
			err.Extensions = map[string]any{"code": "GRAPHQL_VALIDATION_FAILED"}
			return err
		}
	}
	return nil
}
