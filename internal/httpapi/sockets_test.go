package httpapi_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/golang-jwt/jwt/v5"

	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/httpapi"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/redistest"
)

// subprotocols are the two websocket protocols served.
var subprotocols = []string{"graphql-transport-ws", "graphql-ws"}

// wsOpen opens a graphql-transport-ws connection, initialised with token
// ("" for none).
func wsOpen(ctx context.Context, t *testing.T, s *gatewaytest.Server, token string) *websocket.Conn {
	t.Helper()
	return wsOpenWith(ctx, t, s, "graphql-transport-ws", token)
}

// wsOpenWith opens a connection of either subprotocol.
func wsOpenWith(ctx context.Context, t *testing.T, s *gatewaytest.Server, proto, token string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(ctx, s.WSURL(), &websocket.DialOptions{Subprotocols: []string{proto}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	init := gatewaytest.WSMessage{Type: "connection_init"}
	if token != "" {
		init.Payload = []byte(`{"Authorization":"Bearer ` + token + `"}`)
	}
	gatewaytest.WSSend(ctx, t, c, init)
	if m, err := gatewaytest.WSNext(ctx, c); err != nil || m.Type != "connection_ack" {
		t.Fatalf("connection_init: %+v %v", m, err)
	}
	return c
}

// wsDo runs one operation on a connection and returns its first message
// (next or error) and the error that ended the read, if any.
func wsDo(ctx context.Context, t *testing.T, c *websocket.Conn, id, query string) (gatewaytest.WSMessage, error) {
	t.Helper()
	typ := "subscribe"
	if c.Subprotocol() == "graphql-ws" {
		typ = "start"
	}
	gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{ID: id, Type: typ, Payload: []byte(`{"query":` + gatewaytest.Quote(query) + `}`)})
	return gatewaytest.WSNext(ctx, c)
}

// TestSocketOperationsAuthorisedEach: an operation on a websocket is
// authorised as an HTTP request is, each time. After a logout, the
// user's disappearance, or the token's expiry (with its leeway), the next
// operation is refused with UNAUTHENTICATED and the connection closes
// with 4401; HTTP refuses the same token at the same moment.
func TestSocketOperationsAuthorisedEach(t *testing.T) {
	// The tokens' clock runs with the wall clock, ahead by skew.
	var skew atomic.Int64
	now := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	s := gatewaytest.New(t, gatewaytest.Options{Clock: now})
	cases := []struct {
		name   string
		token  func(u gatewaytest.User) string
		revoke func(t *testing.T, u gatewaytest.User)
	}{
		{"logout", nil, func(t *testing.T, u gatewaytest.User) {
			s.MustDo(t, u.Token, `mutation { logout }`, nil)
		}},
		{"user gone", nil, func(t *testing.T, u gatewaytest.User) {
			if err := s.Redis.Del(context.Background(), s.Store.Keys().User(u.ID)).Err(); err != nil {
				t.Fatal(err)
			}
		}},
		{"expired", func(u gatewaytest.User) string {
			// Past its exp, inside the 30 s leeway for ten more seconds.
			now := now()
			c := jwt.MapClaims{"sub": u.ID, "iss": "socialgw", "aud": "socialgw-api", "jti": "short-" + u.ID,
				"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(-20 * time.Second).Unix()}
			tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(gatewaytest.Secret))
			if err != nil {
				t.Fatal(err)
			}
			return tok
		}, func(t *testing.T, u gatewaytest.User) { skew.Add(int64(11 * time.Second)) }},
	}
	ops := []string{
		`{ me { id email } }`,
		`mutation { updateProfile(input: {bio: "still here"}) { id } }`,
		`mutation { createPost(input: {content: "after the end"}) { id } }`,
		`subscription { timelineUpdated { id } }`,
	}
	for _, tc := range cases {
		for i, op := range ops {
			proto := subprotocols[i%2]
			t.Run(fmt.Sprintf("%s/%s/%d", tc.name, proto, i), func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				u := s.Register(t, "sock")
				token := u.Token
				if tc.token != nil {
					token = tc.token(u)
				}
				c := wsOpenWith(ctx, t, s, proto, token)
				if m, err := wsDo(ctx, t, c, "before", `{ me { id } }`); err != nil || !strings.Contains(string(m.Payload), u.ID) {
					t.Fatalf("before: %+v %v", m, err)
				}
				if m, err := gatewaytest.WSNext(ctx, c); err != nil || m.Type != "complete" {
					t.Fatalf("before: %+v %v", m, err)
				}
				tc.revoke(t, u)
				if r := s.Do(t, token, `{ me { id } }`, nil); r.Code() != "UNAUTHENTICATED" {
					t.Fatalf("HTTP still accepts the token: %+v", r)
				}
				m, err := wsDo(ctx, t, c, "after", op)
				if err != nil || !strings.Contains(string(m.Payload), `"UNAUTHENTICATED"`) || strings.Contains(string(m.Payload), `"data":{`) {
					t.Fatalf("after: %+v %s %v; want UNAUTHENTICATED and nothing run", m, m.Payload, err)
				}
				var ce websocket.CloseError
				for err == nil {
					_, err = gatewaytest.WSNext(ctx, c)
				}
				if !errors.As(err, &ce) || ce.Code != 4401 {
					t.Fatalf("connection ended with %v, want close 4401", err)
				}
			})
		}
	}
	if r := s.Do(t, "", `{ me { id } }`, nil); r.Get("me") != nil || len(r.Errors) > 0 {
		t.Fatalf("the server stopped serving: %+v", r)
	}
}

// TestSocketClosedWhenTokenEnds: an open connection whose token is
// revoked closes within the recheck bound even when it sends nothing.
func TestSocketClosedWhenTokenEnds(t *testing.T) {
	s := gatewaytest.New(t, gatewaytest.Options{Sockets: &httpapi.SocketLimits{RecheckAuth: 200 * time.Millisecond}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	u := s.Register(t, "quiet")
	c := wsOpen(ctx, t, s, u.Token)
	s.MustDo(t, u.Token, `mutation { logout }`, nil)
	start := time.Now()
	_, err := gatewaytest.WSNext(ctx, c)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 4401 {
		t.Fatalf("got %v, want close 4401", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("closed after %s", d)
	}
}

// TestSocketBounds: the limits a connection meets, each on its own
// server: the address's request budget spent per operation, idle
// connections closed, connections per address capped, graphql-transport-ws
// pinged and a peer that never answers closed.
func TestSocketBounds(t *testing.T) {
	for _, proto := range subprotocols {
		t.Run("request budget per operation/"+proto, func(t *testing.T) { requestBudgetPerOperation(t, proto) })
	}
	socketLimits(t)
}

func requestBudgetPerOperation(t *testing.T, proto string) {
	{
		s := gatewaytest.New(t, gatewaytest.Options{Abuse: &gateway.Abuse{RateLimits: map[string]ratelimit.Limit{
			ratelimit.RuleRequestIP: {Count: 5, Per: time.Minute}}}})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := wsOpenWith(ctx, t, s, proto, "") // the upgrade spends one
		codes := []string{}
		for i := 0; i < 6; i++ {
			m, err := wsDo(ctx, t, c, fmt.Sprint(i), `{ me { id } }`)
			if err != nil {
				t.Fatal(err)
			}
			code := "ok"
			if strings.Contains(string(m.Payload), "RATE_LIMITED") {
				code = "RATE_LIMITED"
			}
			codes = append(codes, code)
			if _, err := gatewaytest.WSNext(ctx, c); err != nil { // complete
				t.Fatal(err)
			}
		}
		if strings.Join(codes, " ") != "ok ok ok ok RATE_LIMITED RATE_LIMITED" {
			t.Fatalf("answers: %v", codes)
		}
	}
	refusedDocumentsSpendBudget(t, proto)
}

// refusedDocumentsSpendBudget: a document that fails validation is an
// operation too, and its validation the costly part (overlapping fields
// compared pairwise); over HTTP it spends its request's event, so over a
// socket it must spend one as well, or a socket would validate without
// limit.
func refusedDocumentsSpendBudget(t *testing.T, proto string) {
	s := gatewaytest.New(t, gatewaytest.Options{Abuse: &gateway.Abuse{RateLimits: map[string]ratelimit.Limit{
		ratelimit.RuleRequestIP: {Count: 5, Per: time.Minute}}}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := wsOpenWith(ctx, t, s, proto, "") // the upgrade spends one
	typ := "subscribe"
	if proto == "graphql-ws" {
		typ = "start"
	}
	// answer sends a document and returns its answer, skipping the
	// completions of earlier ones.
	answer := func(id, query string) string {
		gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{ID: id, Type: typ, Payload: []byte(`{"query":` + gatewaytest.Quote(query) + `}`)})
		for {
			m, err := gatewaytest.WSNext(ctx, c)
			if err != nil {
				t.Fatal(err)
			}
			if m.ID == id && m.Type != "complete" {
				return string(m.Payload)
			}
		}
	}
	for i := range 4 {
		if p := answer(fmt.Sprint("bad", i), `{ nosuch }`); !strings.Contains(p, "GRAPHQL_VALIDATION_FAILED") {
			t.Fatalf("invalid document answered %s", p)
		}
	}
	if p := answer("last", `{ __typename }`); !strings.Contains(p, "RATE_LIMITED") {
		t.Fatalf("the sixth operation of a 5-event budget ran: %s", p)
	}
}

func socketLimits(t *testing.T) {
	t.Run("idle", func(t *testing.T) {
		s := gatewaytest.New(t, gatewaytest.Options{Sockets: &httpapi.SocketLimits{Idle: 300 * time.Millisecond}})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := wsOpen(ctx, t, s, "")
		_, err := gatewaytest.WSNext(ctx, c)
		var ce websocket.CloseError
		if !errors.As(err, &ce) || ce.Code != websocket.StatusNormalClosure || ce.Reason != "idle" {
			t.Fatalf("got %v, want closed as idle", err)
		}
	})
	t.Run("per address", func(t *testing.T) {
		s := gatewaytest.New(t, gatewaytest.Options{Sockets: &httpapi.SocketLimits{MaxPerAddress: 2}})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		a := wsOpen(ctx, t, s, "")
		wsOpen(ctx, t, s, "")
		_, resp, err := websocket.Dial(ctx, s.WSURL(), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("third connection: %v %+v; want 429 with Retry-After", err, resp)
		}
		a.Close(websocket.StatusNormalClosure, "")
		// The place is given back once the server sees the close.
		redistest.Eventually(t, 5*time.Second, "a place given back after a close", func() bool {
			c, _, err := websocket.Dial(ctx, s.WSURL(), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
			if err == nil {
				c.CloseNow()
			}
			return err == nil
		})
	})
	t.Run("per process", func(t *testing.T) {
		s := gatewaytest.New(t, gatewaytest.Options{Sockets: &httpapi.SocketLimits{Max: 1}})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		wsOpen(ctx, t, s, "")
		_, resp, err := websocket.Dial(ctx, s.WSURL(), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("second connection: %v %+v; want 503 with Retry-After", err, resp)
		}
	})
	t.Run("ping and pong", func(t *testing.T) {
		s := gatewaytest.New(t, gatewaytest.Options{Sockets: &httpapi.SocketLimits{Ping: 100 * time.Millisecond}})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := wsOpen(ctx, t, s, "")
		start := time.Now()
		for {
			var m gatewaytest.WSMessage
			err := wsjson.Read(ctx, c, &m) // pings not answered
			if err != nil {
				if time.Since(start) > 2*time.Second {
					t.Fatalf("closed after %s: %v", time.Since(start), err)
				}
				return
			}
			if m.Type != "ping" {
				t.Fatalf("unexpected %+v", m)
			}
		}
	})
}

// TestSocketInitTimeout: a connection that sends no connection_init
// within its bound is closed: on graphql-transport-ws with 4408, as the
// protocol says; legacy graphql-ws, whose protocol names no code, with
// 1002. A connection that sent it in time stays open past the bound.
func TestSocketInitTimeout(t *testing.T) {
	s := gatewaytest.New(t, gatewaytest.Options{Sockets: &httpapi.SocketLimits{Init: 300 * time.Millisecond}})
	for _, tt := range []struct {
		proto  string
		code   websocket.StatusCode
		reason string
	}{
		{"graphql-transport-ws", 4408, "Connection initialisation timeout"},
		{"graphql-ws", websocket.StatusProtocolError, "connection initialisation timeout"},
	} {
		t.Run(tt.proto, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			// Opened first: its bound ends before the other's.
			initialised := wsOpenWith(ctx, t, s, tt.proto, "")
			c, _, err := websocket.Dial(ctx, s.WSURL(), &websocket.DialOptions{Subprotocols: []string{tt.proto}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			m, err := gatewaytest.WSNext(ctx, c)
			var ce websocket.CloseError
			if !errors.As(err, &ce) || ce.Code != tt.code || ce.Reason != tt.reason {
				t.Fatalf("got %+v, %v; want closed with %d %q", m, err, tt.code, tt.reason)
			}
			if m, err := wsDo(ctx, t, initialised, "1", `{ __typename }`); err != nil || (m.Type != "next" && m.Type != "data") {
				t.Fatalf("the initialised connection: %+v %s, %v", m, m.Payload, err)
			}
		})
	}
}
