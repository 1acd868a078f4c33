package httpapi_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/redisstore"
)

// limited starts a gateway with the given budgets.
func limited(t *testing.T, limits map[string]ratelimit.Limit) *gatewaytest.Server {
	t.Helper()
	return gatewaytest.New(t, gatewaytest.Options{Abuse: &gateway.Abuse{RateLimits: limits}})
}

// TestRequestBudget: over the per-address budget a request is refused as
// a whole with 429, Retry-After and RATE_LIMITED carrying the wait.
func TestRequestBudget(t *testing.T) {
	s := limited(t, map[string]ratelimit.Limit{ratelimit.RuleRequestIP: {Count: 3, Per: time.Minute}})
	for i := range 3 {
		if r := s.Do(t, "", `{ __typename }`, nil); r.Str("__typename") != "Query" {
			t.Fatalf("request %d: %+v", i, r)
		}
	}
	status, h, b := s.Raw(t, "POST", "/query", map[string]string{"Content-Type": jsonType}, strings.NewReader(`{"query":"{ __typename }"}`))
	r := gatewaytest.Decode(t, status, b)
	wait, _ := strconv.Atoi(h.Get("Retry-After"))
	if status != http.StatusTooManyRequests || r.Code() != "RATE_LIMITED" || wait < 1 || wait > 20 || r.Data != nil {
		t.Fatalf("4th request: status %d, Retry-After %q, body %s; want 429, about 20 s, RATE_LIMITED", status, h.Get("Retry-After"), b)
	}
	if got := r.Errors[0].Extensions["retryAfter"]; got != float64(wait) {
		t.Errorf("extensions.retryAfter = %v, Retry-After = %d", got, wait)
	}
	// /media/ spends the same budget: spent, its files are refused too.
	if status, _, b := s.Raw(t, "GET", "/media/p1/f1", nil, nil); status != http.StatusTooManyRequests {
		t.Errorf("/media/ over the budget: status %d (%s), want 429", status, b)
	}
}

// TestMutationBudget: every root mutation field spends one event, aliased
// copies of one mutation included; over the budget the field fails with
// RATE_LIMITED and the others of the document are not affected.
func TestMutationBudget(t *testing.T) {
	s := limited(t, map[string]ratelimit.Limit{ratelimit.RuleMutationUser: {Count: 3, Per: time.Hour}})
	u, other := s.Register(t, "spender"), s.Register(t, "other")
	var doc strings.Builder
	doc.WriteString("mutation {")
	for i := range 5 {
		fmt.Fprintf(&doc, ` b%d: updateProfile(input: {bio: "bio %d"}) { bio }`, i, i)
	}
	doc.WriteString(" }")
	r := s.Do(t, u.Token, doc.String(), nil)
	limitedFields := 0
	for _, e := range r.Errors {
		if e.Extensions["code"] != "RATE_LIMITED" || e.Extensions["retryAfter"] == nil {
			t.Errorf("error %+v, want RATE_LIMITED with retryAfter", e)
		}
		limitedFields++
	}
	if limitedFields != 2 {
		t.Fatalf("%d fields limited, want 2 of 5 with a budget of 3: %+v", limitedFields, r.Errors)
	}
	// The budget is the user's: another user, and queries, go on.
	s.MustDo(t, other.Token, `mutation { updateProfile(input: {bio: "mine"}) { bio } }`, nil)
	s.MustDo(t, u.Token, authMeDoc, nil)
	wantCode(t, s.Do(t, u.Token, `mutation { updateProfile(input: {bio: "again"}) { bio } }`, nil), "RATE_LIMITED")
}

// TestPersistedQueriesShared: a document persisted through one gateway is
// found by another on the same Redis, and the cache keeps its bound.
func TestPersistedQueriesShared(t *testing.T) {
	apq := redisstore.APQConfig{TTL: time.Hour, MaxEntries: 3, MaxQueryBytes: 100}
	a := gatewaytest.New(t, gatewaytest.Options{Abuse: &gateway.Abuse{APQ: apq}})
	b := gatewaytest.Share(t, a)
	persist := func(s *gatewaytest.Server, doc string, withQuery bool) *gatewaytest.Response {
		sum := sha256.Sum256([]byte(doc))
		body := `{"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + hex.EncodeToString(sum[:]) + `"}}}`
		if withQuery {
			body = `{"query":` + gatewaytest.Quote(doc) + `,` + body[1:]
		}
		status, _, out := s.Raw(t, "POST", "/query", map[string]string{"Content-Type": jsonType}, strings.NewReader(body))
		return gatewaytest.Decode(t, status, out)
	}
	doc := func(i int) string { return fmt.Sprintf("query Q%d { __typename }", i) }
	wantCode(t, persist(b, doc(0), false), "PERSISTED_QUERY_NOT_FOUND")
	if r := persist(a, doc(0), true); r.Str("__typename") != "Query" {
		t.Fatalf("persist through a: %+v", r)
	}
	if r := persist(b, doc(0), false); r.Str("__typename") != "Query" {
		t.Fatalf("b does not find what a persisted: %+v", r)
	}
	// Over the cap the oldest go; a document over the size bound runs but
	// is not kept.
	for i := 1; i <= 3; i++ {
		persist(a, doc(i), true)
	}
	wantCode(t, persist(b, doc(0), false), "PERSISTED_QUERY_NOT_FOUND")
	if r := persist(b, doc(3), false); r.Str("__typename") != "Query" {
		t.Fatalf("newest entry evicted: %+v", r)
	}
	big := "query Big { __typename " + strings.Repeat(" ", 100) + "}"
	if r := persist(a, big, true); r.Str("__typename") != "Query" {
		t.Fatalf("a document over the bound did not run: %+v", r)
	}
	wantCode(t, persist(a, big, false), "PERSISTED_QUERY_NOT_FOUND")
	n, err := a.Redis.ZCard(context.Background(), a.Store.Keys().APQIndex()).Result()
	if err != nil || n != 3 {
		t.Errorf("index holds %d entries (%v), want 3", n, err)
	}
}

// TestPersistedQueriesKeptOnlyValid: a document is registered only once
// it has passed the document limits and validation, and only within the
// client address's registration budget; over a websocket as over HTTP.
func TestPersistedQueriesKeptOnlyValid(t *testing.T) {
	apq := redisstore.APQConfig{TTL: time.Hour, MaxEntries: 100, MaxQueryBytes: 1 << 14}
	s := gatewaytest.New(t, gatewaytest.Options{Abuse: &gateway.Abuse{APQ: apq,
		RateLimits: map[string]ratelimit.Limit{ratelimit.RuleAPQIP: {Count: 3, Per: time.Hour}}}})
	hash := func(doc string) string { sum := sha256.Sum256([]byte(doc)); return hex.EncodeToString(sum[:]) }
	ext := func(doc string) string {
		return `"extensions":{"persistedQuery":{"version":1,"sha256Hash":"` + hash(doc) + `"}}`
	}
	post := func(doc string, withQuery bool) *gatewaytest.Response {
		body := `{` + ext(doc) + `}`
		if withQuery {
			body = `{"query":` + gatewaytest.Quote(doc) + `,` + ext(doc) + `}`
		}
		status, _, out := s.Raw(t, "POST", "/query", map[string]string{"Content-Type": jsonType}, strings.NewReader(body))
		return gatewaytest.Decode(t, status, out)
	}
	deep := "{ me " + strings.Repeat("{ followers { edges { node ", 8) + "{ id }" + strings.Repeat(" } } }", 8) + " }"
	refused := []struct{ name, doc string }{
		{"does not parse", "query { me { id "},
		{"does not validate", "query { nosuch }"},
		{"over the limits", deep},
		{"a mutation over GET", "mutation M { logout }"},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "a mutation over GET" {
				q := url.Values{"query": {tc.doc}, "extensions": {`{` + ext(tc.doc) + `}`}}
				s.Raw(t, "GET", "/query?"+q.Encode(), nil, nil)
			} else {
				post(tc.doc, true)
			}
			wantCode(t, post(tc.doc, false), "PERSISTED_QUERY_NOT_FOUND")
		})
	}
	t.Run("over a websocket", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := wsOpen(ctx, t, s, "")
		bad := "query { nosuch2 }"
		gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{ID: "1", Type: "subscribe", Payload: []byte(`{"query":` + gatewaytest.Quote(bad) + `,` + ext(bad) + `}`)})
		if _, err := gatewaytest.WSNext(ctx, c); err != nil {
			t.Fatal(err)
		}
		wantCode(t, post(bad, false), "PERSISTED_QUERY_NOT_FOUND")
	})
	t.Run("budget", func(t *testing.T) {
		kept := 0
		for i := 0; i < 5; i++ {
			doc := fmt.Sprintf("query B%d { __typename }", i)
			if r := post(doc, true); r.Str("__typename") != "Query" {
				t.Fatalf("a document over the budget did not run: %+v", r)
			}
			if post(doc, false).Str("__typename") == "Query" {
				kept++
			}
		}
		if kept != 3 {
			t.Errorf("%d of 5 registrations kept, want the budget's 3", kept)
		}
	})
}

// TestCORS: the allow-list answers preflights for its origins only, and
// decides cross-origin websocket upgrades the same way.
func TestCORS(t *testing.T) {
	s := gatewaytest.New(t, gatewaytest.Options{CORSOrigins: []string{"https://app.example.com"}})
	preflight := func(origin string) http.Header {
		_, h, _ := s.Raw(t, "OPTIONS", "/query", map[string]string{
			"Origin": origin, "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "authorization, content-type",
		}, nil)
		return h
	}
	if h := preflight("https://app.example.com"); h.Get("Access-Control-Allow-Origin") != "https://app.example.com" ||
		!strings.Contains(strings.ToLower(h.Get("Access-Control-Allow-Headers")), "authorization") {
		t.Errorf("allowed origin's preflight: %v", h)
	}
	if h := preflight("https://evil.example"); h.Get("Access-Control-Allow-Origin") != "" {
		t.Errorf("other origin's preflight allowed: %v", h)
	}
	_, h, _ := s.Raw(t, "POST", "/query", map[string]string{"Content-Type": jsonType, "Origin": "https://app.example.com"}, strings.NewReader(`{"query":"{ __typename }"}`))
	if h.Get("Access-Control-Allow-Origin") != "https://app.example.com" || !strings.Contains(h.Get("Access-Control-Expose-Headers"), "Retry-After") {
		t.Errorf("allowed origin's request: %v", h)
	}

	dial := func(origin string) (int, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		c, resp, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/query", &websocket.DialOptions{
			Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: http.Header{"Origin": {origin}},
		})
		if c != nil {
			c.Close(websocket.StatusNormalClosure, "")
		}
		if resp == nil {
			return 0, err
		}
		return resp.StatusCode, err
	}
	if st, err := dial("https://app.example.com"); err != nil || st != http.StatusSwitchingProtocols {
		t.Errorf("allowed origin's websocket: %d, %v", st, err)
	}
	if st, _ := dial("https://evil.example"); st != http.StatusForbidden {
		t.Errorf("other origin's websocket: %d, want 403", st)
	}
	// Same host: its own page over http or https; no other scheme, and no
	// http page when the request says it came over TLS.
	host := strings.TrimPrefix(s.URL, "http://")
	for _, tc := range []struct {
		origin, proto string
		want          int
	}{
		{"http://" + host, "", http.StatusSwitchingProtocols},
		{"https://" + host, "", http.StatusSwitchingProtocols},
		{"https://" + host, "https", http.StatusSwitchingProtocols},
		{"http://" + host, "https", http.StatusForbidden},
		{"file://" + host, "", http.StatusForbidden},
		{"chrome-extension://" + host, "", http.StatusForbidden},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		h := http.Header{"Origin": {tc.origin}}
		if tc.proto != "" {
			h.Set("X-Forwarded-Proto", tc.proto)
		}
		c, resp, _ := websocket.Dial(ctx, "ws://"+host+"/query", &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: h})
		if c != nil {
			c.Close(websocket.StatusNormalClosure, "")
		}
		if resp == nil || resp.StatusCode != tc.want {
			t.Errorf("same host from %s (X-Forwarded-Proto %q): %+v, want %d", tc.origin, tc.proto, resp, tc.want)
		}
		cancel()
	}
}

// TestWebsocketOperationsAreNotGET: the websocket upgrade is a GET
// request, but what is sent over the socket is not bound by the GET rule
// (queries only): a mutation there is executed (and, anonymous, refused
// for want of a token), not refused as a GET mutation.
func TestWebsocketOperationsAreNotGET(t *testing.T) {
	s := gatewaytest.New(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/query", &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(websocket.StatusNormalClosure, "")
	send := func(msg string) {
		if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	read := func() map[string]any {
		_, b, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		return m
	}
	send(`{"type":"connection_init","payload":{}}`)
	if m := read(); m["type"] != "connection_ack" {
		t.Fatalf("got %v, want connection_ack", m)
	}
	send(`{"id":"1","type":"subscribe","payload":{"query":"mutation { logout }"}}`)
	for {
		m := read()
		if m["type"] == "ka" || m["type"] == "ping" {
			continue
		}
		b, _ := json.Marshal(m)
		if strings.Contains(string(b), "POST") || !strings.Contains(string(b), "UNAUTHENTICATED") {
			t.Errorf("mutation over a websocket: %s, want it executed and refused with UNAUTHENTICATED", b)
		}
		return
	}
}
