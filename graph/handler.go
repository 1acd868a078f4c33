package graph

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
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

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gqlguard"
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
	// Limits bound each document before gqlgen parses and validates it
	// (internal/gqlguard; docs/security.md); a zero field disables that
	// limit. Limits.ResponseBytes also bounds the response as it is built.
	Limits gqlguard.Limits
	// MaxConcurrent caps the queries and mutations executing at once over
	// HTTP; excess requests wait up to QueueWait, then get 503 with
	// Retry-After. 0: no cap.
	MaxConcurrent int
	QueueWait     time.Duration
	// MaxBodyBytes bounds a request body; larger ones get 413.
	MaxBodyBytes int64
	// MaxBodyMemory bounds the bytes of JSON request bodies being read at
	// once, all requests together (each reserves its Content-Length, or
	// MaxBodyBytes when it has none, until it is decoded); a request that
	// would pass it gets 503 with Retry-After. Zero means 64 MiB.
	MaxBodyMemory int64
	// Loaders tunes the per-request dataloaders.
	Loaders loader.Config
	// RequestTimeout bounds a query or mutation (not a subscription) on
	// every transport, so that neither a stalled Redis nor CPU-bound work
	// piles requests up: past it the client gets a GraphQL error; 0 means
	// no bound.
	RequestTimeout time.Duration
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
	// Sockets bound websockets: how many, how idle, how often their
	// token is checked again.
	Sockets SocketLimits
	// Uploads bound multipart requests (files attached to a mutation).
	Uploads Uploads
	// FastStats receives the fast path's counts (served, fallbacks by
	// reason); nil: counted but not exported.
	FastStats *FastStats
}

// NewHandler returns the /query handler: POST, GET (queries only),
// websocket and SSE transports, auth, per-request loaders and limits.
func NewHandler(services *Resolver, store loader.Store, authn auth.Authenticator, o Options) http.Handler {
	r := services.reading(o.FastStats)
	loaders := loader.NewFactory(store, o.Loaders)
	es := NewExecutableSchema(Config{Resolvers: &r})
	guard := gqlguard.New(o.Limits, guardModel(es.Schema()))
	// Entry counts alone would let large documents fill the caches with
	// gigabytes: only small ones are kept. The guard reads the documents
	// gqlgen has parsed and validated rather than parse them again.
	docs := smallOnly[*ast.QueryDocument]{lru.New[*ast.QueryDocument](1000), func(q string, _ *ast.QueryDocument) int { return len(q) }}
	guard.UseParsed(func(q string) (*ast.QueryDocument, bool) { return docs.Get(context.Background(), q) })
	srv := handler.New(es)
	slots := newLimiter(o)
	socks := newSockets(o.Sockets)
	ping := o.Sockets.Ping
	if ping <= 0 {
		ping = 15 * time.Second
	}
	srv.AddTransport(transport.Websocket{
		// Pings on both subprotocols; on graphql-transport-ws a peer
		// that does not answer one within two intervals is closed.
		KeepAlivePingInterval: ping,
		PingPongInterval:      ping,
		// checkUpgrade has already accepted the origin: same-origin, or
		// one of CORS_ORIGINS (against cross-site websocket hijacking).
		// Messages are checked as HTTP bodies are (websocket.go). A
		// client that never sends connection_init would hold its
		// connection and goroutines for ever: checkedWebsocket closes it
		// (not gqlgen's InitTimeout, whose close code is the wrong one).
		Implementation: checkedWebsocket{
			WebsocketImplementation: transport.CoderWebsocketImplementation{
				AcceptOptions: coderws.AcceptOptions{InsecureSkipVerify: true},
			},
			initTimeout: cmp.Or(o.Sockets.Init, 10*time.Second),
		},
		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			// How a subscription ends with an error depends on the
			// transport (stream.go).
			ctx = context.WithValue(ctx, websocketKey{}, true)
			// A token in connection_init wins over the upgrade request's
			// header, which the HTTP middleware already checked.
			if h := p.Authorization(); h != "" {
				vctx, err := auth.ViewerFromHeader(ctx, authn, h)
				if err != nil {
					return refuseSocket(ctx, err)
				}
				if s := socketFrom(ctx); s != nil {
					s.setToken(bearer(h)) // checked again by the gate for each operation
				}
				return vctx, nil, nil
			}
			return ctx, nil, nil
		},
	})
	srv.AddTransport(transport.SSE{KeepAlivePingInterval: 15 * time.Second})
	srv.AddTransport(httpTransport{})
	srv.SetQueryCache(docs)
	apq := o.PersistedQueries
	if apq == nil {
		apq = smallOnly[string]{lru.New[string](1000), func(_, q string) int { return len(q) }}
	}
	srv.Use(extension.AutomaticPersistedQuery{Cache: memoAPQ{apq}})
	// After the persisted-query extension (it fills the query in), before
	// parsing and validation. gqlgen's own complexity limit is not used:
	// its walk expands every fragment spread; the guard's cost is the same
	// figure computed without expanding.
	srv.Use(guardExtension{guard})
	srv.SetParserTokenLimit(o.Limits.Tokens)
	srv.Use(getOnlyQueries{})
	if o.Introspection {
		srv.Use(extension.Introspection{})
	} else {
		srv.Use(noIntrospection{})
	}
	// Last of the checks of a document: what reaches it was valid and
	// allowed on its transport.
	srv.Use(apqRegister{cache: apq, budget: o.Limiter})
	// After every check that can refuse a document: an operation that
	// claims its connection's place is sure to be dispatched.
	srv.Use(socketAdmission{})
	g := &gate{authn: authn, budget: o.Limiter, slots: slots, guard: guard, maxBytes: o.Limits.ResponseBytes}
	srv.AroundOperations(g.around)
	srv.AroundOperations(operationDeadline(o.RequestTimeout))
	// Every operation, whatever carries it, may make the store read past
	// its pages' sizes only so far (social.ReadBudget).
	srv.AroundOperations(func(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
		return next(social.WithReadBudget(ctx, social.DefaultReadBudget))
	})
	srv.AroundFields(boundFields)
	srv.SetDisableSuggestion(!o.Suggestions)
	srv.SetErrorPresenter(presentError)
	srv.AroundOperations(endStreams)
	srv.SetRecoverFunc(recoverPanic)
	// Fresh loaders for every response: per request over HTTP, per event
	// on a subscription, so no cache outlives what it was read for.
	srv.AroundResponses(func(ctx context.Context, next graphql.ResponseHandler) *graphql.Response {
		ctx = loader.With(ctx, loaders.New(social.ViewerID(ctx)))
		resp := next(ctx)
		if afterResponse != nil {
			afterResponse(ctx, resp)
		}
		return resp
	})
	// The fast path renders a query's timeline fields without calling
	// field middleware (srv.AroundFields): middleware installed here must
	// not act on query fields, or the fast path must decline when it is
	// on. (mutationBudget below acts on Mutation's root fields only, which
	// the fast path never renders.)
	r.aroundRootFields(srv)
	// The field middleware runs for every field: only when it has a
	// budget to spend.
	if o.Limiter != nil && o.Limiter.Has(ratelimit.RuleMutationUser) {
		srv.AroundFields(mutationBudget(o.Limiter))
	}
	slots.next = srv
	return noStore(clientBudget(o.Limiter, o.TrustedProxies, checkUpgrade(o.OriginAllowed, socks, authn,
		limitBody(o.MaxBodyBytes, newBodyBudget(o.MaxBodyMemory), uploadCheck{o.Uploads, authn}, guard, apq, authenticate(authn, slots)))))
}

// afterResponse, when set (by this package's tests), sees every response
// with its operation.
var afterResponse func(context.Context, *graphql.Response)

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
// JSON or a multipart mutation with 415 (no form transport: it would let a
// browser send a mutation cross-site without a CORS preflight; multipart
// needs a header that forces one, readMultipart). It decodes
// the request's parameters once and measures the document with the guard;
// the verdict travels in the context to the limiter and to the guard's
// gqlgen extension, which reports it. A persisted query sent by its hash
// alone is looked up here (apq), so that it is measured and classified
// (a mutation over GET, a subscription) like any other document; gqlgen's
// persisted-query extension then gets it from the context, not Redis.
func limitBody(max int64, budget *bodyBudget, uploads uploadCheck, guard *gqlguard.Guard, apq graphql.Cache[string], next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var p requestParams
		var upload *multipartBody
		switch r.Method {
		case http.MethodGet:
			// r.URL.Query skips what does not parse (a bad escape, a
			// semicolon): a request is answered as sent or refused.
			q, err := url.ParseQuery(r.URL.RawQuery)
			if err != nil {
				writeError(w, http.StatusBadRequest, social.BadUserInput, "the URL's query string does not parse: "+err.Error())
				return
			}
			if !utf8.ValidString(q.Get("query")) || !utf8.ValidString(q.Get("variables")) || !utf8.ValidString(q.Get("operationName")) {
				writeError(w, http.StatusBadRequest, social.BadUserInput, "the request is not valid UTF-8")
				return
			}
			if loneSurrogate([]byte(q.Get("variables"))) || loneSurrogate([]byte(q.Get("extensions"))) {
				writeError(w, http.StatusBadRequest, social.BadUserInput, loneSurrogateMessage)
				return
			}
			// gqlgen answers undecodable variables or extensions with a
			// bare message: check them here and answer with a code.
			if checkVariables([]byte(q.Get("variables"))) != nil {
				writeError(w, http.StatusBadRequest, social.BadUserInput, errVariablesTooLarge.Error())
				return
			}
			objs := map[string]map[string]any{}
			for _, name := range []string{"variables", "extensions"} {
				obj, err := decodeObject(q.Get(name))
				if err != nil {
					writeError(w, http.StatusBadRequest, social.BadUserInput, name+" must be a JSON object")
					return
				}
				objs[name] = obj
			}
			p = requestParams{Query: q.Get("query"), OperationName: q.Get("operationName"), Variables: objs["variables"],
				persisted: objs["extensions"]["persistedQuery"] != nil, hash: persistedHash(objs["extensions"])}
			p.raw = &graphql.RawParams{Query: p.Query, OperationName: p.OperationName, Variables: p.Variables, Extensions: objs["extensions"]}
		case http.MethodPost:
			mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
			var raw []byte
			switch mt {
			case "application/json":
				if max > 0 && r.ContentLength > max {
					writeError(w, http.StatusRequestEntityTooLarge, social.BadUserInput, "request body too large")
					return
				}
				// The body's memory is reserved for the time it is read
				// and decoded: slow bodies cannot add up past the budget.
				size := r.ContentLength // at most max: checked above
				if size < 0 {
					size = max
				}
				if !budget.take(size) {
					w.Header().Set("Retry-After", "1")
					writeError(w, http.StatusServiceUnavailable, social.RateLimited, "the server is reading as many request bodies as it can hold: retry shortly")
					return
				}
				defer budget.give(size)
				body := r.Body
				if max > 0 {
					body = http.MaxBytesReader(w, r.Body, max)
				}
				var err error
				raw, err = readBody(body, r.ContentLength)
				var tooLarge *http.MaxBytesError
				if errors.As(err, &tooLarge) {
					writeError(w, http.StatusRequestEntityTooLarge, social.BadUserInput, "request body too large")
					return
				}
				if err != nil {
					writeError(w, http.StatusBadRequest, social.BadUserInput, "could not read request body")
					return
				}
			case "multipart/form-data":
				// Files are spooled to temporary files, removed once the
				// request is answered.
				var refusal *bodyError
				upload, refusal = readMultipart(w, r, max, uploads)
				defer upload.remove()
				if refusal != nil {
					if refusal.status == http.StatusServiceUnavailable {
						w.Header().Set("Retry-After", "1")
					}
					writeError(w, refusal.status, refusal.code, refusal.msg)
					return
				}
				raw = upload.operations
			default:
				writeError(w, http.StatusUnsupportedMediaType, social.BadUserInput,
					"POST bodies must be application/json (multipart/form-data for a mutation that uploads files)")
				return
			}
			// encoding/json would silently turn invalid bytes into
			// U+FFFD: a client sending Latin-1 gets told instead.
			if !utf8.Valid(raw) {
				writeError(w, http.StatusBadRequest, social.BadUserInput, "the request body is not valid UTF-8")
				return
			}
			if loneSurrogate(raw) {
				writeError(w, http.StatusBadRequest, social.BadUserInput, loneSurrogateMessage)
				return
			}
			// gqlgen's own decoding errors name Go types and echo the
			// body: check the shape here and answer plainly.
			params, err := decodeParams(raw)
			var dup duplicateMember
			switch {
			case errors.Is(err, errVariablesTooLarge) || errors.As(err, &dup):
				writeError(w, http.StatusBadRequest, social.BadUserInput, err.Error())
				return
			case err != nil:
				writeError(w, http.StatusBadRequest, social.BadUserInput,
					"the body must be one JSON object with a string query and object variables and extensions")
				return
			}
			if upload != nil {
				if err := upload.attach(params.Variables); err != nil {
					writeError(w, http.StatusBadRequest, social.BadUserInput, err.Error())
					return
				}
				raw = nil // the body is read; gqlgen reads the parameters from the context
			}
			p = requestParams{Query: params.Query, OperationName: params.OperationName, Variables: params.Variables,
				persisted: params.Extensions["persistedQuery"] != nil, hash: persistedHash(params.Extensions), raw: params}
			r.Body = io.NopCloser(bytes.NewReader(raw))
		default:
			w.Header().Set("Allow", "GET, POST")
			writeError(w, http.StatusMethodNotAllowed, social.BadUserInput, "use GET for queries or POST")
			return
		}
		if r.Header.Get("Upgrade") != "" {
			next.ServeHTTP(w, r)
			return
		}
		if p.Query == "" && !p.persisted {
			writeError(w, http.StatusBadRequest, social.BadUserInput, "the request has no query")
			return
		}
		ctx := withAPQPending(r.Context())
		if p.Query == "" && p.hash != "" {
			if doc, ok := apq.Get(ctx, p.hash); ok {
				p.Query = doc
				ctx = context.WithValue(ctx, apqMemoKey{}, apqMemo{p.hash, doc})
			}
		}
		c := &checked{query: p.Query, operationName: p.OperationName, params: p.raw}
		c.report, c.err = guard.Check(p.Query, p.OperationName, p.Variables)
		if r.Method == http.MethodGet && c.err == nil && c.report.Operation == ast.Mutation {
			w.Header().Set("Allow", "POST")
			writeError(w, http.StatusMethodNotAllowed, social.BadUserInput, "mutations must be sent with POST")
			return
		}
		if upload != nil && c.err == nil && c.report.Operation != ast.Mutation {
			writeError(w, http.StatusBadRequest, social.BadUserInput, "only a mutation may be sent as multipart/form-data")
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(ctx, checkedKey{}, c)))
	})
}

const loneSurrogateMessage = "the request escapes half of a UTF-16 surrogate pair (\\uD800–\\uDFFF without its other half): not a character"

// loneSurrogate reports whether JSON text escapes half of a UTF-16
// surrogate pair: a high half (\uD800–\uDBFF) not followed by an escaped
// low half, or a low half (\uDC00–\uDFFF) alone. encoding/json turns one
// into U+FFFD without a word, so a post would be stored other than sent.
// Malformed escapes are left to the JSON decoder, which refuses them.
func loneSurrogate(b []byte) bool {
	for i := 0; i < len(b); i++ {
		if b[i] != '\\' {
			continue
		}
		r, ok := escapedUnit(b, i)
		switch {
		case !ok:
			i++ // an escaped character (\\, \", \n, …): skip it
		case r >= 0xDC00 && r <= 0xDFFF:
			return true
		case r >= 0xD800 && r <= 0xDBFF:
			if lo, ok := escapedUnit(b, i+6); !ok || lo < 0xDC00 || lo > 0xDFFF {
				return true
			}
			i += 11
		default:
			i += 5
		}
	}
	return false
}

// escapedUnit reads the UTF-16 unit of a \uXXXX escape at b[i:].
func escapedUnit(b []byte, i int) (rune, bool) {
	if i+6 > len(b) || b[i] != '\\' || b[i+1] != 'u' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[i+2:i+6]), 16, 16)
	return rune(n), err == nil
}

// persistedHash is the sha256Hash of a request's persistedQuery
// extension, or "".
func persistedHash(ext map[string]any) string {
	pq, _ := ext["persistedQuery"].(map[string]any)
	h, _ := pq["sha256Hash"].(string)
	return h
}

type apqMemoKey struct{}

// apqMemo is a persisted query limitBody already looked up.
type apqMemo struct{ hash, doc string }

// memoAPQ answers gqlgen's lookup of a persisted query from the request's
// context when limitBody looked it up already: one Redis read a request.
type memoAPQ struct{ graphql.Cache[string] }

func (c memoAPQ) Get(ctx context.Context, hash string) (string, bool) {
	if m, ok := ctx.Value(apqMemoKey{}).(apqMemo); ok && m.hash == hash {
		return m.doc, true
	}
	return c.Cache.Get(ctx, hash)
}

// requestParams are the GraphQL parameters of an HTTP request.
type requestParams struct {
	Query, OperationName string
	Variables            map[string]any
	// persisted: the request names a persisted query (its document may
	// be absent); hash is its sha256Hash.
	persisted bool
	hash      string
	// raw are the request's parameters as gqlgen's transports would
	// decode them (httpTransport executes them).
	raw *graphql.RawParams
}

// decodeParams decodes a POST body as gqlgen's transport does, refusing
// what encoding/json's Unmarshal refuses (decodeJSON): anything but one
// JSON object whose query and operationName are strings and whose
// variables and extensions are objects.
func decodeParams(raw []byte) (*graphql.RawParams, error) {
	if err := uniqueKeys(raw); err != nil {
		return nil, err
	}
	p := &graphql.RawParams{}
	if err := decodeJSON(raw, p); err != nil {
		return nil, err
	}
	if !finiteNumbers(p.Variables) || !finiteNumbers(p.Extensions) {
		return nil, errors.New("a number out of range")
	}
	return p, nil
}

// uniqueKeys refuses a body whose object names a member twice:
// encoding/json keeps the last, so {"query":"{me{id}}","query":"mutation
// {logout}"} would run the logout that a proxy reading the first member
// took for a query. Only the top level is read here: it decides what runs.
// It also bounds the variables (checkVariables) before they are decoded.
func uniqueKeys(raw []byte) error {
	m, dup, err := objectMembers(raw, paramNames)
	switch {
	case err != nil:
		return err
	case dup != "":
		return duplicateMember(dup)
	}
	if v, ok := m["variables"]; ok {
		return checkVariables(v)
	}
	return nil
}

// paramNames are the members of a request's parameters (a POST body, the
// payload of a websocket operation).
var paramNames = []string{"query", "operationName", "variables", "extensions"}

// objectMembers reads the members of the JSON object raw by name and
// returns the first name it holds twice ("" when none). A member is named
// as encoding/json matches it to a field of names: without regard to case
// ("Query", "variableſ"), so two spellings of one field count as the same
// member and a bound on "variables" holds for every spelling; other
// members by their exact name. raw that is not an object has no members
// here (its decoding refuses it).
func objectMembers(raw []byte, names []string) (map[string]json.RawMessage, string, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, "", err
	}
	m, dup := map[string]json.RawMessage{}, ""
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, "", err
		}
		k := memberName(t, names)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, "", err
		}
		if _, seen := m[k]; seen && dup == "" {
			dup = k
		}
		m[k] = v
	}
	return m, dup, nil
}

// memberName is a member's name as encoding/json matches it to a field of
// names.
func memberName(t json.Token, names []string) string {
	k, _ := t.(string)
	for _, name := range names {
		if strings.EqualFold(k, name) {
			return name
		}
	}
	return k
}

// duplicateMember is a member a request's object names twice.
type duplicateMember string

func (d duplicateMember) Error() string {
	return fmt.Sprintf("the member %q appears twice in the request", string(d))
}

// inMessage is the refusal of a websocket message that names d twice. A
// long name is cut, so that the refusal fits in a close frame's reason.
func (d duplicateMember) inMessage() string {
	name := string(d)
	if short := cut(name, 32); short != name {
		name = short + "…"
	}
	return fmt.Sprintf("the member %q appears twice in the message", name)
}

// Bounds of a request's variables, checked on their JSON text before they
// become Go values: the largest legitimate ones (a post with an audience
// of 1000 ids) are about 15 KB and 1000 values.
const (
	maxVariablesBytes  = 64 << 10
	maxVariablesValues = 5000
)

var errVariablesTooLarge = fmt.Errorf("the variables exceed %d bytes or %d values", maxVariablesBytes, maxVariablesValues)

// checkVariables refuses variables over maxVariablesBytes or
// maxVariablesValues (counted as the JSON text's values: one for each
// array element and object member, without decoding them).
func checkVariables(v []byte) error {
	if len(v) > maxVariablesBytes {
		return errVariablesTooLarge
	}
	return checkValues(v)
}

// checkValues refuses JSON text of more than maxVariablesValues values.
func checkValues(v []byte) error {
	values, inString := 0, false
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case !inString && (c == ',' || c == '[' || c == '{'):
			values++
		}
	}
	if values > maxVariablesValues {
		return errVariablesTooLarge
	}
	return nil
}

// decodeObject decodes a GET request's variables or extensions as
// gqlgen's GET transport does, refusing what encoding/json's Unmarshal
// into a map refuses (decodeJSON; "" is no object).
func decodeObject(v string) (map[string]any, error) {
	if v == "" {
		return nil, nil
	}
	var obj map[string]any
	if err := decodeJSON([]byte(v), &obj); err != nil {
		return nil, err
	}
	if !finiteNumbers(obj) {
		return nil, errors.New("a number out of range")
	}
	return obj, nil
}

// decodeJSON decodes one JSON value into v as gqlgen's transports decode
// requests, numbers kept as json.Number (an Int variable is not rounded
// through a float), and refuses data after it, as encoding/json's
// Unmarshal does. json.Number lets through numbers no float64 holds
// (1e400), which Unmarshal refuses: the callers check them with
// finiteNumbers.
func decodeJSON(src []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(src))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if rest := bytes.TrimLeft(src[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		return errors.New("data after the JSON value")
	}
	return nil
}

// finiteNumbers reports whether every number in a decoded JSON value fits
// a float64, as encoding/json requires of the numbers it decodes itself.
func finiteNumbers(v any) bool {
	switch v := v.(type) {
	case json.Number:
		_, err := strconv.ParseFloat(string(v), 64)
		return err == nil
	case map[string]any:
		for _, e := range v {
			if !finiteNumbers(e) {
				return false
			}
		}
	case []any:
		for _, e := range v {
			if !finiteNumbers(e) {
				return false
			}
		}
	}
	return true
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

// bodyBudget is the memory JSON request bodies being read may hold, all
// requests together (Options.MaxBodyMemory).
type bodyBudget struct{ left atomic.Int64 }

// defaultBodyMemory is MaxBodyMemory's default: 64 bodies of the default
// MAX_BODY_BYTES at once.
const defaultBodyMemory = 64 << 20

func newBodyBudget(n int64) *bodyBudget {
	if n <= 0 {
		n = defaultBodyMemory
	}
	b := &bodyBudget{}
	b.left.Store(n)
	return b
}

// take reserves n bytes, or reports that they are not there.
func (b *bodyBudget) take(n int64) bool {
	for {
		left := b.left.Load()
		if left < n {
			return false
		}
		if b.left.CompareAndSwap(left, left-n) {
			return true
		}
	}
}

func (b *bodyBudget) give(n int64) { b.left.Add(n) }

// readBody reads a body into one buffer of its announced length (no
// doubling as io.ReadAll grows its buffer), or as io.ReadAll does without
// one.
func readBody(body io.Reader, length int64) ([]byte, error) {
	if length <= 0 {
		return io.ReadAll(body)
	}
	// net/http ends the body at its Content-Length.
	buf := make([]byte, length)
	if _, err := io.ReadFull(body, buf); err != nil {
		return nil, fmt.Errorf("read a body of %d bytes: %w", length, err)
	}
	return buf, nil
}
