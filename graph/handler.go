package graph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"mime"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/extension"
	"github.com/99designs/gqlgen/graphql/handler/lru"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
	"github.com/vektah/gqlparser/v2/parser"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/social"
)

// Options are the limits and switches of the GraphQL handler.
type Options struct {
	// Introspection enables schema introspection (off in production).
	Introspection bool
	// Suggestions enables "did you mean" hints in validation errors.
	Suggestions bool
	// ComplexityLimit bounds a document's cost (each field 1, lists times
	// their first argument); 0 disables the limit.
	ComplexityLimit int
	// MaxBodyBytes bounds a request body; larger ones get 413.
	MaxBodyBytes int64
	// Naive turns off batching, caching, page prefetching and the fast
	// path: one Redis call per field, as a straightforward implementation
	// would do. Only the benchmark uses it, as the baseline.
	Naive bool
	// Loaders tunes the per-request dataloaders (ignored when Naive).
	Loaders loader.Config
	// RequestTimeout bounds a query or mutation (not a subscription), so a
	// stalled Redis does not pile requests up; 0 means no bound.
	RequestTimeout time.Duration
	// GenericOnly turns the timeline fast path off (fastpath.go): every
	// field goes through gqlgen's generated execution. Tests compare both.
	GenericOnly bool
	// OriginAllowed decides whether a cross-origin browser may open a
	// websocket: the CORS allow-list (same-origin is always allowed; nil
	// allows no other origin).
	OriginAllowed func(*http.Request) bool
	// Limiter spends the per-address request budget and the per-user
	// mutation budget (internal/ratelimit); nil: no limits.
	Limiter Limiter
	// TrustedProxies are the proxies whose X-Forwarded-For names the
	// client address.
	TrustedProxies []netip.Prefix
	// PersistedQueries caches automatic persisted queries (hash →
	// document); nil: a small cache in this process.
	PersistedQueries graphql.Cache[string]
}

// NewHandler returns the /query handler: POST, GET (queries only),
// websocket and SSE transports, auth, per-request loaders and limits. The
// read mode (batched, or the benchmark's naive baseline) is chosen here,
// once: the handler serves a copy of r with it.
func NewHandler(services *Resolver, store loader.Store, authn auth.Authenticator, o Options) http.Handler {
	r := *services
	loaders := loader.NewFactory(store, o.Loaders)
	r.ahead = batched{profiles: r.Profiles}
	if o.Naive {
		loaders = loader.NewNaiveFactory(store)
		r.ahead = naive{}
	}
	srv := handler.New(NewExecutableSchema(Config{Resolvers: &r, Complexity: complexity()}))
	srv.AddTransport(transport.Websocket{
		KeepAlivePingInterval: 15 * time.Second,
		// A client that never sends connection_init would otherwise hold
		// its connection and goroutines for ever.
		InitTimeout: 10 * time.Second,
		// checkUpgrade has already accepted the origin: same-origin, or
		// one of CORS_ORIGINS (against cross-site websocket hijacking).
		Implementation: transport.CoderWebsocketImplementation{
			AcceptOptions: coderws.AcceptOptions{InsecureSkipVerify: true},
		},
		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			// A token in connection_init wins over the upgrade request's
			// header, which the HTTP middleware already checked.
			if h := p.Authorization(); h != "" {
				vctx, err := auth.ViewerFromHeader(ctx, authn, h)
				if err != nil {
					return refuseSocket(ctx, err)
				}
				return vctx, nil, nil
			}
			return ctx, nil, nil
		},
	})
	srv.AddTransport(transport.SSE{})
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	srv.SetQueryCache(lru.New[*ast.QueryDocument](1000))
	apq := o.PersistedQueries
	if apq == nil {
		apq = lru.New[string](1000)
	}
	srv.Use(extension.AutomaticPersistedQuery{Cache: apq})
	srv.Use(getOnlyQueries{})
	if o.Introspection {
		srv.Use(extension.Introspection{})
	}
	if o.ComplexityLimit > 0 {
		srv.Use(extension.FixedComplexityLimit(o.ComplexityLimit))
	}
	srv.SetDisableSuggestion(!o.Suggestions)
	srv.SetErrorPresenter(presentError)
	srv.SetRecoverFunc(recoverPanic)
	// Fresh loaders for every response: per request over HTTP, per event
	// on a subscription, so no cache outlives what it was read for.
	srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		return next(loader.With(ctx, loaders.New(social.ViewerID(ctx))))
	})
	if !o.GenericOnly && !o.Naive {
		srv.AroundRootFields(r.fastPath)
	}
	// The field middleware runs for every field: only when it has a
	// budget to spend.
	if o.Limiter != nil && o.Limiter.Has(ratelimit.RuleMutationUser) {
		srv.AroundFields(mutationBudget(o.Limiter))
	}
	return clientBudget(o.Limiter, o.TrustedProxies, checkUpgrade(o.OriginAllowed,
		limitBody(o.MaxBodyBytes, deadline(o.RequestTimeout, authenticate(authn, srv)))))
}

// deadline bounds every request but the long-lived ones (websocket
// upgrades and SSE streams): Redis calls take the request's context, so
// the bound covers them too.
func deadline(d time.Duration, next http.Handler) http.Handler {
	if d <= 0 {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "" || strings.Contains(r.Header.Get("Accept"), "text/event-stream") {
			next.ServeHTTP(w, r)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// complexity counts list fields as their page size, so one document
// cannot ask for a hundred pages of a hundred items of a hundred items.
func complexity() ComplexityRoot {
	var c ComplexityRoot
	page := func(childComplexity int, first *int) int {
		// An out-of-range first counts as the default: the resolver then
		// refuses it with BAD_USER_INPUT rather than the limit answering
		// COMPLEXITY_LIMIT_EXCEEDED.
		n := social.DefaultFirst
		if first != nil && *first > 0 && *first <= social.MaxFirst {
			n = *first
		}
		// Saturate: a product that wrapped around would let a deeply
		// nested document through the limit.
		if childComplexity > (math.MaxInt-1)/n {
			return math.MaxInt
		}
		return 1 + n*childComplexity
	}
	c.Query.Timeline = func(cc int, first *int, _ *string) int { return page(cc, first) }
	c.Query.UserTimeline = func(cc int, _ string, first *int, _ *string) int { return page(cc, first) }
	c.User.Followers = func(cc int, first *int, _ *string) int { return page(cc, first) }
	c.User.Following = func(cc int, first *int, _ *string) int { return page(cc, first) }
	c.User.CommonFollowing = func(cc int, _ string, first *int, _ *string) int { return page(cc, first) }
	c.User.Posts = func(cc int, first *int, _ *string) int { return page(cc, first) }
	c.Post.Likers = func(cc int, first *int, _ *string) int { return page(cc, first) }
	c.Post.Comments = func(cc int, first *int, _ *string) int { return page(cc, first) }
	return c
}

// refuseSocket ends a websocket whose connection_init carried a bad token:
// closed with 4403 (graphql-transport-ws's "Forbidden"), or 4500 with the
// error logged and masked when authentication itself failed.
func refuseSocket(ctx context.Context, err error) (context.Context, *transport.InitPayload, error) {
	code, msg := 4403, social.ErrorMessage(err)
	if social.ErrorCode(err) == social.Internal {
		presentError(ctx, err) // logs it
		code = 4500
	}
	ctx = transport.AppendCloseReason(transport.WithWebsocketCloseCode(ctx, code), msg)
	return ctx, nil, errors.New(msg)
}

// authenticate puts the viewer of the Authorization header into the
// context. A present but invalid token is refused with 401 and a GraphQL
// error: it never degrades to an anonymous request.
func authenticate(authn auth.Authenticator, next http.Handler) http.Handler {
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

// limitBody refuses bodies over max with 413 and any POST that is not
// JSON with 415 (no form or multipart transports: they would let a
// browser send a mutation cross-site without a CORS preflight).
func limitBody(max int64, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			q := r.URL.Query()
			if !utf8.ValidString(q.Get("query")) || !utf8.ValidString(q.Get("variables")) || !utf8.ValidString(q.Get("operationName")) {
				writeError(w, http.StatusBadRequest, social.BadUserInput, "the request is not valid UTF-8")
				return
			}
			// gqlgen answers undecodable variables or extensions with a
			// bare message: check them here and answer with a code.
			for _, p := range []string{"variables", "extensions"} {
				var obj map[string]any
				if v := q.Get(p); v != "" && json.Unmarshal([]byte(v), &obj) != nil {
					writeError(w, http.StatusBadRequest, social.BadUserInput, p+" must be a JSON object")
					return
				}
			}
			if isMutation(q.Get("query"), q.Get("operationName")) {
				w.Header().Set("Allow", "POST")
				writeError(w, http.StatusMethodNotAllowed, social.BadUserInput, "mutations must be sent with POST")
				return
			}
		case http.MethodPost:
		default:
			w.Header().Set("Allow", "GET, POST")
			writeError(w, http.StatusMethodNotAllowed, social.BadUserInput, "use GET for queries or POST")
			return
		}
		if r.Method == http.MethodPost {
			mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			if mt != "application/json" {
				writeError(w, http.StatusUnsupportedMediaType, social.BadUserInput, "POST bodies must be application/json")
				return
			}
			if max > 0 {
				if r.ContentLength > max {
					writeError(w, http.StatusRequestEntityTooLarge, social.BadUserInput, "request body too large")
					return
				}
				body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
				var tooLarge *http.MaxBytesError
				if errors.As(err, &tooLarge) {
					writeError(w, http.StatusRequestEntityTooLarge, social.BadUserInput, "request body too large")
					return
				}
				if err != nil {
					writeError(w, http.StatusBadRequest, social.BadUserInput, "could not read request body")
					return
				}
				// encoding/json would silently turn invalid bytes into
				// U+FFFD: a client sending Latin-1 gets told instead.
				if !utf8.Valid(body) {
					writeError(w, http.StatusBadRequest, social.BadUserInput, "the request body is not valid UTF-8")
					return
				}
				// gqlgen's own decoding errors name Go types and echo the
				// body: check the shape here and answer plainly.
				var params struct {
					Query         string         `json:"query"`
					OperationName string         `json:"operationName"`
					Variables     map[string]any `json:"variables"`
					Extensions    map[string]any `json:"extensions"`
				}
				if err := json.Unmarshal(body, &params); err != nil {
					writeError(w, http.StatusBadRequest, social.BadUserInput,
						"the body must be one JSON object with a string query and object variables and extensions")
					return
				}
				r.Body = io.NopCloser(bytes.NewReader(body))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isMutation reports whether a GET request's document selects a mutation.
// Parse errors are left to gqlgen, which reports them with its own code.
func isMutation(query, operationName string) bool {
	if !strings.Contains(query, "mutation") {
		return false
	}
	doc, err := parser.ParseQuery(&ast.Source{Input: query})
	if err != nil {
		return false
	}
	for _, op := range doc.Operations {
		if (operationName == "" || op.Name == operationName) && op.Operation == ast.Mutation {
			return true
		}
	}
	return false
}

// writeError writes a GraphQL-shaped error response outside execution.
func writeError(w http.ResponseWriter, status int, code social.Code, msg string) {
	writeErrors(w, status, &gqlerror.Error{Message: msg, Extensions: map[string]any{"code": string(code)}})
}

// writeDomainError answers a request refused before execution by a domain
// error, as presentError words it: 503 with Retry-After for an internal one
// (logged; "retry shortly" when the store is unreachable), 429 with
// Retry-After for RATE_LIMITED, 400 otherwise.
func writeDomainError(w http.ResponseWriter, r *http.Request, err error) {
	gerr := presentError(r.Context(), err)
	status := http.StatusBadRequest
	switch social.ErrorCode(err) {
	case social.Internal:
		status = http.StatusServiceUnavailable
		w.Header().Set("Retry-After", "1")
	case social.RateLimited:
		status = http.StatusTooManyRequests
		if s, ok := gerr.Extensions["retryAfter"].(int); ok {
			w.Header().Set("Retry-After", strconv.Itoa(s))
		}
	}
	writeErrors(w, status, gerr)
}

// writeErrors writes errors as a GraphQL response outside execution.
func writeErrors(w http.ResponseWriter, status int, errs ...*gqlerror.Error) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(graphql.Response{Errors: errs})
	_, _ = w.Write(b)
}
