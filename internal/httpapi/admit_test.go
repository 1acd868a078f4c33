package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/gqlguard/hostile"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
)

// stalledGateway is a gateway over a "Redis" that accepts connections and
// never answers: every request that reads Redis runs into its deadline.
func stalledGateway(t *testing.T) *gateway.Gateway {
	t.Helper()
	gw, _ := stalledGatewayHeard(t)
	return gw
}

// stalledGatewayHeard is stalledGateway with a report of whether its
// "Redis" has received s yet.
func stalledGatewayHeard(t *testing.T) (*gateway.Gateway, func(s string) bool) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	var mu sync.Mutex
	var got []byte
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				buf := make([]byte, 4096)
				for {
					n, err := c.Read(buf)
					mu.Lock()
					got = append(got, buf[:n]...)
					mu.Unlock()
					if err != nil {
						return
					}
				}
			}()
		}
	}()
	heard := func(s string) bool {
		mu.Lock()
		defer mu.Unlock()
		return bytes.Contains(got, []byte(s))
	}
	rdb, err := redisstore.Connect("redis://"+ln.Addr().String()+"?read_timeout=30s&write_timeout=30s", false)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	gw, err := gateway.New(rdb, gateway.Config{
		Prefix: "stalled:", Feed: redisstore.DefaultFeed(), PasswordConcurrency: 1, RefreshTTL: time.Hour,
		Tokens: auth.TokenOptions{Method: "HS256", Secret: []byte(gatewaytest.Secret), Issuer: "i", Audience: "a", TTL: time.Minute},
	})
	if err != nil {
		t.Fatal(err)
	}
	return gw, heard
}

// sseData returns the data of an SSE response's events, which must be
// one next and one complete.
func sseData(t *testing.T, body []byte) []byte {
	t.Helper()
	var events []string
	var data string
	for _, block := range strings.Split(string(body), "\n\n") {
		for _, line := range strings.Split(block, "\n") {
			if ev, ok := strings.CutPrefix(line, "event: "); ok {
				events = append(events, ev)
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok {
				data = d
			}
		}
	}
	if strings.Join(events, ",") != "next,complete" {
		t.Errorf("events %q, want next then complete; body %q", events, body)
	}
	return []byte(data)
}

// TestDeadlineOnEveryTransport checks that a query stuck on Redis ends by
// its deadline with a GraphQL error body and code, whatever its transport
// and Accept header.
func TestDeadlineOnEveryTransport(t *testing.T) {
	base := gatewaytest.Serve(t, stalledGateway(t).NewQueryHandler(gateway.QueryOptions{MaxBodyBytes: 1 << 20, RequestTimeout: 300 * time.Millisecond}))
	const doc = `{ user(name: "someone") { id } }`
	tests := []struct {
		name, method, accept string
		sse                  bool
	}{
		{"POST application/json", "POST", "application/json", false},
		{"POST graphql-response+json", "POST", "application/graphql-response+json", false},
		{"POST no Accept", "POST", "", false},
		{"GET", "GET", "application/json", false},
		{"POST text/event-stream", "POST", "text/event-stream", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var req *http.Request
			if tt.method == "GET" {
				req, _ = http.NewRequest("GET", base+"/query?query="+url.QueryEscape(doc), nil)
			} else {
				req, _ = http.NewRequest("POST", base+"/query", strings.NewReader(`{"query": `+gatewaytest.Quote(doc)+`}`))
				req.Header.Set("Content-Type", jsonType)
			}
			if tt.accept != "" {
				req.Header.Set("Accept", tt.accept)
			}
			start := time.Now()
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("answered after %v; the deadline is 300ms", d)
			}
			if tt.sse {
				body = sseData(t, body)
			}
			r := gatewaytest.Decode(t, resp.StatusCode, body)
			if r.Code() != "INTERNAL_SERVER_ERROR" {
				t.Errorf("status %d, body %s: want an INTERNAL_SERVER_ERROR", resp.StatusCode, body)
			}
		})
	}
}

// TestDeadlineStopsValidation checks that CPU-bound work in gqlgen itself
// (here the validation of a document the guard would have refused, with
// the guard off) is answered at the deadline with an error body, not with
// gqlgen's bare null.
func TestDeadlineStopsValidation(t *testing.T) {
	s := gatewaytest.New(t)
	base := gatewaytest.Serve(t, s.NewQueryHandler(gateway.QueryOptions{MaxBodyBytes: 1 << 20, RequestTimeout: 200 * time.Millisecond}))
	start := time.Now()
	status, body := gatewaytest.PostRaw(t, base, "", hostile.RepeatedField(3000), nil)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("answered after %v; the deadline is 200ms", d)
	}
	r := gatewaytest.Decode(t, status, body)
	if status != http.StatusGatewayTimeout || r.Code() != "INTERNAL_SERVER_ERROR" || !strings.Contains(r.Errors[0].Message, "longer than 200ms") {
		t.Errorf("status %d, body %s: want 504 and the deadline's error", status, body)
	}
}

// TestConcurrencyCap checks that requests beyond the cap wait briefly then
// get 503, Retry-After and a GraphQL error, while refused documents are
// answered without waiting for a slot.
func TestConcurrencyCap(t *testing.T) {
	gw, heard := stalledGatewayHeard(t)
	base := gatewaytest.Serve(t, gw.NewQueryHandler(gateway.QueryOptions{
		MaxBodyBytes: 1 << 20, RequestTimeout: 2 * time.Second, MaxConcurrent: 1, QueueWait: 50 * time.Millisecond,
		Limits: gqlguard.DefaultLimits(20000),
	}))
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Holds the one slot until its deadline.
		http.Post(base+"/query", jsonType, strings.NewReader(`{"query": "{ user(name: \"a\") { id } }"}`))
	}()
	defer wg.Wait()
	// The gateway opens its first Redis connection (go-redis greets with
	// HELLO, which is never answered) for the first read of the request
	// that executes, holding the slot.
	redistest.Eventually(t, 5*time.Second, "the first request to execute", func() bool { return heard("hello") })

	start := time.Now()
	req, _ := http.NewRequest("POST", base+"/query", strings.NewReader(`{"query": "{ user(name: \"b\") { id } }"}`))
	req.Header.Set("Content-Type", jsonType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if d := time.Since(start); d > time.Second {
		t.Errorf("refused after %v; the queue wait is 50ms", d)
	}
	r := gatewaytest.Decode(t, resp.StatusCode, body)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" || r.Code() != "RATE_LIMITED" {
		t.Errorf("status %d, Retry-After %q, body %s: want 503, 1 and RATE_LIMITED", resp.StatusCode, resp.Header.Get("Retry-After"), body)
	}

	status, body := gatewaytest.PostRaw(t, base, "", hostile.ExponentialFragments(30), nil)
	if r := gatewaytest.Decode(t, status, body); r.Code() != "GRAPHQL_VALIDATION_FAILED" {
		t.Errorf("a refused document while the slot is taken: status %d, body %s", status, body)
	}
}

// TestResponseCeiling checks that a response larger than the ceiling is
// stopped and answered with an error. Introspection is where it can
// happen: its lists are as long as the schema, which the estimate does not
// count.
func TestResponseCeiling(t *testing.T) {
	s := gatewaytest.New(t)
	limits := gqlguard.DefaultLimits(20000)
	limits.ResponseBytes = 4000
	base := gatewaytest.Serve(t, s.NewQueryHandler(gateway.QueryOptions{MaxBodyBytes: 1 << 20, Introspection: true, Limits: limits}))
	const doc = `{ __schema { types { name description fields { name description args { name description } } } } }`
	status, body := gatewaytest.PostRaw(t, base, "", doc, nil)
	r := gatewaytest.Decode(t, status, body)
	if r.Code() != "COMPLEXITY_LIMIT_EXCEEDED" || !strings.Contains(r.Errors[0].Message, "exceeded 4000 bytes") {
		t.Errorf("status %d, body %.300s: want the response ceiling's error", status, body)
	}
	// Under the ceiling, the same handler answers.
	if r := gatewaytest.Post(t, base, "", `{ __schema { queryType { name } } }`, nil); len(r.Errors) > 0 {
		t.Errorf("a small introspection query: %+v", r.Errors)
	}
}

// TestRequestWithoutQuery checks the GraphQL-over-HTTP answer to a request
// that names no document: 400 with a GraphQL error.
func TestRequestWithoutQuery(t *testing.T) {
	s := gatewaytest.New(t)
	status, _, body := s.Raw(t, "POST", "/query", map[string]string{"Content-Type": jsonType}, strings.NewReader(`{"qeury": "{ me { id } }"}`))
	if r := gatewaytest.Decode(t, status, body); status != http.StatusBadRequest || r.Code() != "BAD_USER_INPUT" {
		t.Errorf("status %d, body %s", status, body)
	}
}

// TestWebsocketLimits checks the limits on operations sent over a
// websocket: the guard refuses a hostile document, and a query stuck on
// Redis ends by the deadline with an error.
func TestWebsocketLimits(t *testing.T) {
	gw := stalledGateway(t)
	s := &gatewaytest.Server{Gateway: gw}
	s.URL = gatewaytest.Serve(t, gw.NewQueryHandler(gateway.QueryOptions{
		MaxBodyBytes: 1 << 20, RequestTimeout: 300 * time.Millisecond, Limits: gqlguard.DefaultLimits(20000),
	}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, s.WSURL(), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{Type: "connection_init"})
	if m, err := gatewaytest.WSNext(ctx, c); err != nil || m.Type != "connection_ack" {
		t.Fatalf("connection_init: %+v %v", m, err)
	}
	tests := []struct {
		name, doc, code string
	}{
		{"hostile document", hostile.ExponentialFragments(30), "GRAPHQL_VALIDATION_FAILED"},
		{"query past its deadline", `{ user(name: "someone") { id } }`, "INTERNAL_SERVER_ERROR"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := strconv.Itoa(i + 1)
			payload, _ := json.Marshal(map[string]any{"query": tt.doc})
			start := time.Now()
			gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{ID: id, Type: "subscribe", Payload: payload})
			var m gatewaytest.WSMessage
			for m.ID != id || m.Type == "complete" {
				if m, err = gatewaytest.WSNext(ctx, c); err != nil {
					t.Fatal(err)
				}
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("answered after %v", d)
			}
			var errs []struct{ Extensions map[string]any }
			switch m.Type {
			case "error": // a request error: the payload is the error list
				_ = json.Unmarshal(m.Payload, &errs)
			case "next":
				var r struct {
					Errors []struct{ Extensions map[string]any }
				}
				_ = json.Unmarshal(m.Payload, &r)
				errs = r.Errors
			}
			if len(errs) == 0 || errs[0].Extensions["code"] != tt.code {
				t.Errorf("%s %s, want an error with code %s", m.Type, m.Payload, tt.code)
			}
		})
	}
}

// TestWebsocketInFlight: a connection may have eight queries executing (or
// being written) at once; the read loop reads no further message until
// one of them ends, so a client that sends more waits (TCP holds it
// back) rather than queueing work in the process. The execution slots
// shared with HTTP are taken by socket operations too: with two slots, a
// third operation waits, then is refused.
func TestWebsocketInFlight(t *testing.T) {
	stuck, _ := json.Marshal(map[string]any{"query": `{ user(name: "someone") { id } }`}) // on a Redis that never answers
	open := func(t *testing.T, slots int, timeout time.Duration) (context.Context, *websocket.Conn) {
		gw := stalledGateway(t)
		s := &gatewaytest.Server{Gateway: gw}
		s.URL = gatewaytest.Serve(t, gw.NewQueryHandler(gateway.QueryOptions{
			MaxBodyBytes: 1 << 20, RequestTimeout: timeout, Limits: gqlguard.DefaultLimits(20000),
			MaxConcurrent: slots, QueueWait: 100 * time.Millisecond,
		}))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		t.Cleanup(cancel)
		return ctx, wsOpen(ctx, t, s, "")
	}
	t.Run("per connection", func(t *testing.T) {
		const timeout = time.Second
		ctx, c := open(t, 0, timeout)
		start := time.Now()
		for i := range 10 {
			gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{ID: strconv.Itoa(i), Type: "subscribe", Payload: stuck})
		}
		answered := map[string]time.Duration{}
		for len(answered) < 10 {
			m, err := gatewaytest.WSNext(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if m.Type == "next" {
				answered[m.ID] = time.Since(start)
			}
		}
		for i := range 10 {
			d := answered[strconv.Itoa(i)]
			if late := i >= 8; late != (d >= 2*timeout-200*time.Millisecond) {
				t.Errorf("operation %d answered after %s: the first eight run at once, the others after", i, d)
			}
		}
	})
	t.Run("execution slots", func(t *testing.T) {
		ctx, c := open(t, 2, 3*time.Second)
		for i := range 3 {
			gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{ID: strconv.Itoa(i), Type: "subscribe", Payload: stuck})
		}
		m, err := gatewaytest.WSNext(ctx, c)
		if err != nil || m.Type != "next" || !strings.Contains(string(m.Payload), "RATE_LIMITED") || !strings.Contains(string(m.Payload), "the server is busy") {
			t.Fatalf("first answer %+v %s %v, want the third refused as busy", m, m.Payload, err)
		}
	})
}
