package graph_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/live"
	"github.com/socialgw/gateway/internal/redistest"
)

// Live timelines inside one gateway: what the process-level tests in
// cmd/gateway cannot look at (goroutines, the hub's counters) or cannot
// wait for (a revocation check every 30s).

const liveQuery = `subscription { timelineUpdated { id content } }`

// liveServer is a gateway with live timelines on a real redis-server.
func liveServer(t *testing.T, lc gateway.LiveConfig) *gatewaytest.Server {
	t.Helper()
	redistest.Addr(t)
	if !redistest.Real() {
		t.Skip("live timelines need a real redis-server")
	}
	return gatewaytest.New(t, gatewaytest.Options{Live: &lc})
}

// wsSubscribe opens a graphql-transport-ws socket as token and subscribes.
func wsSubscribe(ctx context.Context, t *testing.T, s *gatewaytest.Server, token string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(ctx, wsURL(s), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	wsSend(ctx, t, c, wsMessage{Type: "connection_init", Payload: json.RawMessage(`{"Authorization": "Bearer ` + token + `"}`)})
	if m, err := wsNext(ctx, c); err != nil || m.Type != "connection_ack" {
		t.Fatalf("connection_init: %+v, %v", m, err)
	}
	q, _ := json.Marshal(map[string]string{"query": liveQuery})
	wsSend(ctx, t, c, wsMessage{ID: "1", Type: "subscribe", Payload: q})
	return c
}

// waitSubscribers waits until the hub counts n subscribers.
func waitSubscribers(t *testing.T, h *live.Hub, n int) {
	t.Helper()
	redistest.Eventually(t, 10*time.Second, fmt.Sprintf("%d hub subscribers", n), func() bool { return h.Stats().Subscribers == n })
}

// waitChannel waits until Redis counts a subscriber of the live channel
// ch. The hub counts a subscriber before Redis confirms its channel, and
// a message announced before that is not delivered: a test that expects
// one publishes it only after this.
func waitChannel(ctx context.Context, t *testing.T, s *gatewaytest.Server, ch string) {
	t.Helper()
	redistest.Eventually(t, 10*time.Second, ch+" subscribed in Redis", func() bool {
		n, err := redistest.Master(t, s.Redis, ch).PubSubShardNumSub(ctx, ch).Result()
		return err == nil && n[ch] == 1
	})
}

// TestLiveClientsDisappearing: clients that vanish without a goodbye (a
// dropped TCP connection, a cancelled SSE request) leave nothing behind:
// the hub forgets them, Redis unsubscribes their channels, and the
// goroutines are back to what they were.
func TestLiveClientsDisappearing(t *testing.T) {
	s := liveServer(t, gateway.LiveConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	users := make([]gatewaytest.User, 10)
	for i := range users {
		users[i] = s.Register(t, "live")
	}
	// One subscription first, so lazily started parts (pools, the hub's
	// connection) are part of the baseline.
	warm := wsSubscribe(ctx, t, s, users[0].Token)
	waitSubscribers(t, s.Hub, 1)
	warm.CloseNow()
	waitSubscribers(t, s.Hub, 0)
	// The baseline once the warm-up's goroutines have ended: the count
	// unchanged over ten polls.
	base, same := 0, 0
	redistest.Eventually(t, 10*time.Second, "the goroutine count to settle", func() bool {
		n := runtime.NumGoroutine()
		if n == base {
			same++
		} else {
			base, same = n, 0
		}
		return same >= 10
	})

	var sockets []*websocket.Conn
	var sse []context.CancelFunc
	for i, u := range users {
		if i%2 == 0 {
			sockets = append(sockets, wsSubscribe(ctx, t, s, u.Token))
			continue
		}
		rctx, rcancel := context.WithCancel(ctx)
		sse = append(sse, rcancel)
		body := strings.NewReader(`{"query": "` + liveQuery + `"}`)
		req, _ := http.NewRequestWithContext(rctx, http.MethodPost, s.URL+"/query", body)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+u.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		go func() { _, _ = bufio.NewReader(resp.Body).ReadString(0) }()
	}
	waitSubscribers(t, s.Hub, len(users))
	if n := runtime.NumGoroutine(); n <= base {
		t.Fatalf("%d goroutines with %d subscribers open, baseline %d: the test measures nothing", n, len(users), base)
	}
	for _, c := range sockets {
		c.CloseNow() // no close frame: the peer just goes away
	}
	for _, c := range sse {
		c()
	}
	waitSubscribers(t, s.Hub, 0)
	ch := s.Store.Keys().LiveUser(users[0].ID)
	var n int
	var subs map[string]int64
	t.Cleanup(func() {
		if t.Failed() {
			buf := make([]byte, 1<<20)
			t.Logf("%d goroutines, baseline %d; %d Redis subscribers of %s\n%s",
				n, base, subs[ch], ch, buf[:runtime.Stack(buf, true)])
		}
	})
	redistest.Eventually(t, 10*time.Second, "the goroutines and Redis subscriptions of the clients gone", func() bool {
		n = runtime.NumGoroutine()
		subs, _ = redistest.Master(t, s.Redis, ch).PubSubShardNumSub(ctx, ch).Result()
		return n <= base && subs[ch] == 0
	})
}

// TestLiveRevokedToken: logging out ends the subscriptions of the token
// with an error the client can act on.
func TestLiveRevokedToken(t *testing.T) {
	s := liveServer(t, gateway.LiveConfig{RecheckAuth: 50 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u := s.Register(t, "revoked")
	c := wsSubscribe(ctx, t, s, u.Token)
	waitSubscribers(t, s.Hub, 1)
	s.MustDo(t, u.Token, `mutation { logout }`, nil)
	m, err := wsNext(ctx, c)
	if err != nil || m.Type != "error" || !strings.Contains(string(m.Payload), "UNAUTHENTICATED") ||
		!strings.Contains(string(m.Payload), "revoked") {
		t.Fatalf("after logout: %+v (%s), %v; want an UNAUTHENTICATED error", m, m.Payload, err)
	}
	waitSubscribers(t, s.Hub, 0)
}

// TestLiveSlowClientDropped: a subscriber whose buffer overflows is dropped
// with RATE_LIMITED, and the gateway keeps serving others.
func TestLiveSlowClientDropped(t *testing.T) {
	s := liveServer(t, gateway.LiveConfig{Hub: live.HubConfig{Buffer: 2}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	u := s.Register(t, "slow")
	c := wsSubscribe(ctx, t, s, u.Token)
	waitSubscribers(t, s.Hub, 1)
	// A burst of announcements faster than one subscriber's checks, once
	// Redis has the channel (a burst before that would be lost, not
	// overflow).
	waitChannel(ctx, t, s, s.Store.Keys().LiveUser(u.ID))
	ch := s.Store.Keys().LiveUser(u.ID)
	_, err := s.Redis.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i := range 500 {
			p.SPublish(ctx, ch, fmt.Sprintf("%d:%s", 1000000+i, u.ID))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	m, err := wsNext(ctx, c)
	if err != nil || m.Type != "error" || !strings.Contains(string(m.Payload), "RATE_LIMITED") {
		t.Fatalf("after the burst: %+v (%s), %v; want a RATE_LIMITED error", m, m.Payload, err)
	}
	if st := s.Hub.Stats(); st.Dropped != 1 {
		t.Errorf("hub stats %+v, want 1 dropped", st)
	}
	// Others still subscribe and get posts.
	v := s.Register(t, "other")
	c2 := wsSubscribe(ctx, t, s, v.Token)
	waitSubscribers(t, s.Hub, 1)
	waitChannel(ctx, t, s, s.Store.Keys().LiveUser(v.ID))
	id := s.MustDo(t, v.Token, `mutation { createPost(input: {content: "still serving"}) { id } }`, nil).Str("createPost.id")
	m, err = wsNext(ctx, c2)
	if err != nil || m.Type != "next" || !strings.Contains(string(m.Payload), `"id":"`+id+`"`) {
		t.Fatalf("other subscriber: %+v (%s), %v; want post %s", m, m.Payload, err, id)
	}
}

// TestLiveSubscriptionBounds: a user holds at most LiveConfig.MaxPerUser
// subscriptions on a process, and the process at most MaxSubscriptions in
// all; one more is refused with RATE_LIMITED (and a retryAfter), and a
// closed subscription frees its place.
func TestLiveSubscriptionBounds(t *testing.T) {
	s := liveServer(t, gateway.LiveConfig{MaxPerUser: 2, MaxSubscriptions: 3})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	a, b := s.Register(t, "bounded"), s.Register(t, "other")
	refused := func(who string, c *websocket.Conn) {
		t.Helper()
		m, err := wsNext(ctx, c)
		// A resolver's error at the start: a "next" carrying errors, then
		// "complete".
		if err != nil || (m.Type != "error" && m.Type != "next") || !strings.Contains(string(m.Payload), `"code":"RATE_LIMITED"`) ||
			!strings.Contains(string(m.Payload), "retryAfter") {
			t.Fatalf("%s over the bound: %+v (%s), %v; want a RATE_LIMITED error with retryAfter", who, m, m.Payload, err)
		}
	}
	a1 := wsSubscribe(ctx, t, s, a.Token)
	wsSubscribe(ctx, t, s, a.Token)
	waitSubscribers(t, s.Hub, 2)
	refused("a third subscription of one user", wsSubscribe(ctx, t, s, a.Token))
	wsSubscribe(ctx, t, s, b.Token)
	waitSubscribers(t, s.Hub, 3)
	refused("a subscription past the process's bound", wsSubscribe(ctx, t, s, b.Token))

	a1.CloseNow()
	waitSubscribers(t, s.Hub, 2)
	again := wsSubscribe(ctx, t, s, a.Token)
	waitSubscribers(t, s.Hub, 3)
	waitChannel(ctx, t, s, s.Store.Keys().LiveUser(a.ID))
	id := s.MustDo(t, a.Token, `mutation { createPost(input: {content: "bounded"}) { id } }`, nil).Str("createPost.id")
	m, err := wsNext(ctx, again)
	if err != nil || m.Type != "next" || !strings.Contains(string(m.Payload), `"id":"`+id+`"`) {
		t.Fatalf("the subscription that took the freed place: %+v (%s), %v; want post %s", m, m.Payload, err, id)
	}
}
