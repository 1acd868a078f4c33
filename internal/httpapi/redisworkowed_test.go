package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/social"
)

// TestRedisWorkBudget: an operation that makes Redis step over an
// author's 1 000 posts hidden from the signed-in viewer (NOT_TO them,
// which the reader's index steps over inside Redis and charges to the
// operation's read budget, spent at 2 000; over 1 000 units of work past
// the free 250) spends a budget of 500 units a minute; the address's next request is refused
// with 429 and Retry-After before its body is read, and a signed-in
// user's next operation from another address too, with RATE_LIMITED;
// another client goes on. Over a websocket, whose operations get their
// deadline from the operation rules, the operations after the one that
// spent the budget are answered RATE_LIMITED before they are parsed.
func TestRedisWorkBudget(t *testing.T) {
	s := gatewaytest.New(t, gatewaytest.Options{Abuse: &gateway.Abuse{
		RateLimits:     map[string]ratelimit.Limit{ratelimit.RuleRedisWork: {Count: 500, Per: time.Minute}},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	}})
	author, user, other := s.Register(t, "work"), s.Register(t, "work"), s.Register(t, "work")
	for i := range 1000 {
		if _, err := s.Store.CreatePost(context.Background(), author.ID, social.NewPost{Content: "hidden " + strconv.Itoa(i), NotTo: []string{user.ID, other.ID}}); err != nil {
			t.Fatal(err)
		}
	}
	// A request deadline, as in production: the websocket's operations
	// get theirs from the operation rules.
	url := gatewaytest.Serve(t, s.NewQueryHandler(gateway.QueryOptions{Limits: gqlguard.DefaultLimits(20000),
		MaxBodyBytes: 1 << 20, RequestTimeout: 10 * time.Second}))
	heavy := fmt.Sprintf(`{ userTimeline(userId: %q, first: 1) { pageInfo { hasNextPage } } }`, author.ID)
	light := `{ __typename }`
	post := func(addr, token, query string) (int, http.Header, *gatewaytest.Response) {
		h := map[string]string{"Content-Type": "application/json", "X-Forwarded-For": addr}
		if token != "" {
			h["Authorization"] = "Bearer " + token
		}
		req, _ := http.NewRequest(http.MethodPost, url+"/query", strings.NewReader(`{"query":`+gatewaytest.Quote(query)+`}`))
		for k, v := range h {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, gatewaytest.Decode(t, resp.StatusCode, body)
	}
	steps := []struct {
		name, addr, token, query string
		status                   int
		code                     string
	}{
		{"heavy, within the budget", "192.0.2.1", user.Token, heavy, 200, ""},
		{"same address: refused before reading", "192.0.2.1", "", light, 429, "RATE_LIMITED"},
		{"same user elsewhere: refused", "192.0.2.2", user.Token, light, 200, "RATE_LIMITED"},
		{"another client", "192.0.2.3", other.Token, light, 200, ""},
	}
	for _, st := range steps {
		status, header, r := post(st.addr, st.token, st.query)
		if status != st.status || r.Code() != st.code {
			t.Errorf("%s: %d %+v; want %d %q", st.name, status, r.Errors, st.status, st.code)
		}
		if st.code != "" && status == 429 && header.Get("Retry-After") == "" {
			t.Errorf("%s: no Retry-After", st.name)
		}
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/query", &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: http.Header{"X-Forwarded-For": {"192.0.2.4"}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	// Signed in: an anonymous viewer's page reads public posts only, and
	// would not spend the budget.
	gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{Type: "connection_init", Payload: json.RawMessage(`{"Authorization": "Bearer ` + other.Token + `"}`)})
	if m, err := gatewaytest.WSNext(ctx, c); err != nil || m.Type != "connection_ack" {
		t.Fatalf("init: %+v %v", m, err)
	}
	// The last is not even a document: refused before it is parsed, as
	// the address's HTTP requests are before they are read.
	for i, want := range []string{"", "RATE_LIMITED", "RATE_LIMITED"} {
		doc := heavy
		if i == 2 {
			doc = "{ not a document"
		}
		gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{ID: strconv.Itoa(i), Type: "subscribe", Payload: []byte(`{"query":` + gatewaytest.Quote(doc) + `}`)})
		m, err := gatewaytest.WSNext(ctx, c)
		if err != nil || m.Type != "next" || strings.Contains(string(m.Payload), "RATE_LIMITED") != (want != "") {
			t.Errorf("socket operation %d: %+v %v; want code %q", i, m, err, want)
		}
		if m, err := gatewaytest.WSNext(ctx, c); err != nil || m.Type != "complete" {
			t.Errorf("socket operation %d: %+v %v, want complete", i, m, err)
		}
	}
}
