package httpapi_test

import (
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/operation"
)

// diffCase is one request of the differential corpus.
type diffCase struct {
	name         string
	method       string
	query        string // the URL's raw query string
	contentType  string
	accept       string
	body         string
	sameAsGqlgen bool
	// For a deliberate deviation: what this gateway answers, and why.
	status int
	code   string // extensions.code of the first error ("" for none)
	reason string
}

// deviation declares a case where the gateway answers otherwise than
// gqlgen's transports, on purpose.
func deviation(status int, code, reason string) diffCase {
	return diffCase{status: status, code: code, reason: reason}
}

var (
	apqDoc  = `{ __typename }`
	apqHash = func() string { h := sha256.Sum256([]byte(apqDoc)); return hex.EncodeToString(h[:]) }()
	apqExt  = `{"persistedQuery":{"version":1,"sha256Hash":"` + apqHash + `"}}`
)

// diffCorpus is the corpus, in order (the persisted-query cases depend on
// those before them). Cases that should answer alike say so; the others
// are the deliberate deviations, each with its reason.
func diffCorpus() []diffCase {
	post := func(name, body string, d diffCase) diffCase {
		d.name, d.method, d.contentType, d.body = name, http.MethodPost, "application/json", body
		return d
	}
	get := func(name, query string, d diffCase) diffCase {
		d.name, d.method, d.query = name, http.MethodGet, query
		return d
	}
	same := diffCase{sameAsGqlgen: true}
	accept := func(d diffCase, a string) diffCase { d.accept = a; d.name += " (Accept: " + a + ")"; return d }
	q := url.QueryEscape
	requestError := "GraphQL-over-HTTP: a request error has no data entry and is 200 for application/json (gqlgen: 422 with data null)"
	requestError400 := "GraphQL-over-HTTP: a request error has no data entry (gqlgen writes data null)"
	plain := "gqlgen's decoding errors name Go types and echo the body; the gateway answers with a code and a plain message"
	return []diffCase{
		post("query", `{"query":"{ __typename }"}`, same),
		accept(post("query", `{"query":"{ __typename }"}`, same), "application/graphql-response+json"),
		accept(post("query", `{"query":"{ __typename }"}`, same), "*/*"),
		accept(post("query", `{"query":"{ __typename }"}`, same), "application/json;q=0.9, application/graphql-response+json"),
		accept(post("query", `{"query":"{ __typename }"}`, same), "text/html"),
		post("variables", `{"query":"query($n: String!) { user(name: $n) { id } }","variables":{"n":"nobody"}}`, same),
		post("operation name", `{"query":"query A { __typename } query B { __typename }","operationName":"B"}`, same),
		post("null variables and extensions", `{"query":"{ __typename }","variables":null,"extensions":null}`, same),
		post("unknown member", `{"query":"{ __typename }","other":[1,2]}`, same),
		post("field error", `{"query":"{ post(id: \"nope\") { id } }"}`, same),
		post("parse error", `{"query":"{ me {"}`, deviation(200, "GRAPHQL_PARSE_FAILED", requestError)),
		accept(post("parse error", `{"query":"{ me {"}`, deviation(400, "GRAPHQL_PARSE_FAILED", requestError400)), "application/graphql-response+json"),
		post("validation error", `{"query":"{ nope }"}`, deviation(200, "GRAPHQL_VALIDATION_FAILED", requestError)),
		post("missing variable", `{"query":"query($n: String!) { user(name: $n) { id } }"}`, deviation(200, "GRAPHQL_VALIDATION_FAILED", requestError)),
		post("unknown operation name", `{"query":"query A { __typename }","operationName":"B"}`, deviation(200, "GRAPHQL_VALIDATION_FAILED", requestError)),
		post("no query", `{}`, deviation(400, "BAD_USER_INPUT", "a request without a document is refused before execution, with a code")),
		post("bad JSON", `{"query":`, deviation(400, "BAD_USER_INPUT", plain)),
		post("not an object", `["{ __typename }"]`, deviation(400, "BAD_USER_INPUT", plain)),
		post("variables not an object", `{"query":"{ __typename }","variables":[1]}`, deviation(400, "BAD_USER_INPUT", plain)),
		post("query not a string", `{"query":5}`, deviation(400, "BAD_USER_INPUT", plain)),
		post("data after the object", `{"query":"{ __typename }"} {}`, deviation(400, "BAD_USER_INPUT", plain)),
		post("number out of range", `{"query":"{ __typename }","variables":{"n":1e400}}`, deviation(400, "BAD_USER_INPUT", plain)),
		post("duplicate member", `{"query":"{ __typename }","query":"{ me { id } }"}`,
			deviation(400, "BAD_USER_INPUT", "encoding/json keeps the last of two members; a proxy may read the first: refused")),
		post("duplicate member in another case", `{"query":"{ __typename }","Query":"{ me { id } }"}`,
			deviation(400, "BAD_USER_INPUT", "encoding/json matches members without regard to case: two spellings are one member named twice")),
		post("invalid UTF-8", "{\"query\":\"{ user(name: \\\"\xff\\\") { id } }\"}",
			deviation(400, "BAD_USER_INPUT", "encoding/json would turn invalid bytes into U+FFFD silently")),
		post("lone surrogate", `{"query":"query($n: String!) { user(name: $n) { id } }","variables":{"n":"\ud800"}}`,
			deviation(400, "BAD_USER_INPUT", "encoding/json would turn half a surrogate pair into U+FFFD silently")),
		{name: "text/plain body", method: http.MethodPost, contentType: "text/plain", body: `{"query":"{ __typename }"}`,
			status: 415, code: "BAD_USER_INPUT", reason: "no form transport: a POST must be JSON (or multipart), so browsers preflight it"},
		{name: "PUT", method: http.MethodPut, contentType: "application/json", body: `{"query":"{ __typename }"}`,
			status: 405, code: "BAD_USER_INPUT", reason: "GraphQL-over-HTTP: a method other than GET and POST is 405 with Allow"},
		get("query", "query="+q("{ __typename }"), same),
		accept(get("query", "query="+q("{ __typename }"), same), "application/graphql-response+json"),
		get("variables", "query="+q("query($n: String!) { user(name: $n) { id } }")+"&variables="+q(`{"n":"nobody"}`), same),
		get("parse error", "query="+q("{ me {"), deviation(200, "GRAPHQL_PARSE_FAILED", requestError)),
		get("mutation", "query="+q("mutation { logout }"),
			deviation(405, "BAD_USER_INPUT", "GraphQL-over-HTTP: a mutation over GET is 405 with Allow: POST, refused before anything runs (gqlgen: 406, no code)")),
		get("subscription", "query="+q("subscription { timelineUpdated { id } }"),
			deviation(405, "BAD_USER_INPUT", "GET carries queries only: 405 with Allow: POST, before anything runs")),
		post("subscription without event-stream", `{"query":"subscription { timelineUpdated { id } }"}`,
			deviation(400, "BAD_USER_INPUT", "a subscription needs a stream: gqlgen would hold the request open, with no deadline, until the first event")),
		get("repeated parameter", "query="+q("{ __typename }")+"&query="+q("{ me { id } }"),
			deviation(400, "BAD_USER_INPUT", "a parameter given twice is refused rather than resolved first-wins")),
		get("query string that does not parse", "query="+q("{ __typename }")+"&x=%zz",
			deviation(400, "BAD_USER_INPUT", "net/url skips what does not parse: a request is answered as sent or refused")),
		get("variables not JSON", "query="+q("{ __typename }")+"&variables=%7Bnope",
			deviation(400, "BAD_USER_INPUT", plain)),
		get("persisted query not yet known", "extensions="+q(apqExt), same),
		post("persisted query registered", `{"query":"`+apqDoc+`","extensions":`+apqExt+`}`, same),
		get("persisted query by hash", "extensions="+q(apqExt), same),
		post("persisted query hash mismatch", `{"query":"{ me { id } }","extensions":`+apqExt+`}`, same),
	}
}

// gqlgenHandler serves the gateway's schema, with the same operation
// rules and execution, through gqlgen's own transport.POST and
// transport.GET only.
func gqlgenHandler(s *gatewaytest.Server) http.Handler {
	exec := graph.NewExecution(s.Resolver, s.Store, graph.ExecOptions{})
	rules := operation.New(exec.Schema, operation.Options{Introspection: true, Suggestions: true, Limits: gqlguard.DefaultLimits(20000)})
	srv := handler.New(exec.Schema)
	rules.Install(srv)
	exec.Install(srv)
	srv.AddTransport(transport.GET{})
	srv.AddTransport(transport.POST{})
	// Registering persisted queries is per request, as the edge does.
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		srv.ServeHTTP(w, r.WithContext(operation.WithRegistration(r.Context())))
	})
}

type diffAnswer struct {
	status      int
	contentType string
	body        string
}

func diffDo(t *testing.T, base string, c diffCase) diffAnswer {
	t.Helper()
	u := base
	if c.query != "" {
		u += "?" + c.query
	}
	req, err := http.NewRequest(c.method, u, strings.NewReader(c.body))
	if err != nil {
		t.Fatal(err)
	}
	if c.contentType != "" {
		req.Header.Set("Content-Type", c.contentType)
	}
	if c.accept != "" {
		req.Header.Set("Accept", c.accept)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return diffAnswer{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}
}

// TestTransportDifferential sends the corpus to the gateway's POST/GET
// transport and to gqlgen's, both over the same schema, rules and store,
// and compares status, Content-Type and body byte for byte. The headers
// every /query answer carries (Cache-Control: no-store, nosniff,
// Content-Length) are the edge's and not compared.
func TestTransportDifferential(t *testing.T) {
	s := gatewaytest.New(t)
	ours := gatewaytest.Serve(t, s.NewQueryHandler(gateway.QueryOptions{Introspection: true, Suggestions: true,
		Limits: gqlguard.DefaultLimits(20000), MaxBodyBytes: 1 << 20}))
	theirs := httptest.NewServer(gqlgenHandler(s))
	t.Cleanup(theirs.Close)
	for _, c := range diffCorpus() {
		got, want := diffDo(t, ours, c), diffDo(t, theirs.URL, c)
		if c.sameAsGqlgen {
			if got != want {
				t.Errorf("%s %s: the gateway answers\n  %d %s %s\ngqlgen answers\n  %d %s %s", c.method, c.name,
					got.status, got.contentType, got.body, want.status, want.contentType, want.body)
			}
			continue
		}
		r := gatewaytest.Decode(t, got.status, []byte(got.body))
		if got.status != c.status || r.Code() != c.code {
			t.Errorf("%s %s: got %d %q (%s), want %d %q (%s)", c.method, c.name, got.status, r.Code(), got.body, c.status, c.code, c.reason)
		}
		if got == want {
			t.Errorf("%s %s: declared a deviation (%s) but answers as gqlgen does: %d %s", c.method, c.name, c.reason, got.status, got.body)
		}
	}
}
