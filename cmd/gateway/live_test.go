package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"
	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redisproc"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// Live timelines end to end: gateway processes (this test binary started
// again as the gateway, process_test.go), one redis-server of their own that
// the tests restart, and real JavaScript clients from npm
// (testdata/jsclients, installed with npm ci).

// jsTransports are the three ways a client subscribes.
var jsTransports = []string{"transport-ws", "legacy-ws", "sse"}

// jsClients returns the directory of the JavaScript clients, installing
// them with npm ci when node_modules is missing. Without node or npm the
// test is skipped, unless REQUIRE_NODE=1 (CI), where it fails.
func jsClients(t *testing.T) string {
	t.Helper()
	needNode(t)
	dir, err := filepath.Abs(filepath.Join("testdata", "jsclients"))
	if err != nil {
		t.Fatal(err)
	}
	npmCI(t, dir)
	return dir
}

// jsSub is a JavaScript client running one subscription.
type jsSub struct {
	lines  chan map[string]any
	stderr *syncBuffer
}

// subscribeJS starts a client of transport subscribing to the timeline of
// the holder of token at base; it is killed when the test ends.
func subscribeJS(t *testing.T, dir, transport, base, token, since string) *jsSub {
	t.Helper()
	cmd := exec.Command("node", "subscribe.mjs", transport, base, token, since)
	cmd.Dir = dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	s := &jsSub{lines: make(chan map[string]any, 1000), stderr: &syncBuffer{}}
	cmd.Stderr = s.stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		defer close(s.lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				m = map[string]any{"type": "garbage", "line": sc.Text()}
			}
			s.lines <- m
		}
	}()
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	return s
}

// next returns the client's next line, failing after timeout.
func (s *jsSub) next(t *testing.T, timeout time.Duration) map[string]any {
	t.Helper()
	select {
	case m, ok := <-s.lines:
		if !ok {
			t.Fatalf("client exited; stderr:\n%s", s.stderr)
		}
		return m
	case <-time.After(timeout):
		t.Fatalf("nothing from the client within %s; stderr:\n%s", timeout, s.stderr)
	}
	return nil
}

// post returns the post of an event line, failing on anything else.
func (s *jsSub) post(t *testing.T, timeout time.Duration) (id, content, author string) {
	t.Helper()
	m := s.next(t, timeout)
	data, _ := m["data"].(map[string]any)
	p, _ := data["timelineUpdated"].(map[string]any)
	if m["type"] != "next" || p == nil || m["errors"] != nil {
		t.Fatalf("want an event with a post, got %v", m)
	}
	a, _ := p["author"].(map[string]any)
	id, _ = p["id"].(string)
	content, _ = p["content"].(string)
	author, _ = a["name"].(string)
	return id, content, author
}

// errorCode returns the extensions.code of a line's first error.
func errorCode(m map[string]any) string {
	errs, _ := m["errors"].([]any)
	if len(errs) == 0 {
		return ""
	}
	e, _ := errs[0].(map[string]any)
	ext, _ := e["extensions"].(map[string]any)
	c, _ := ext["code"].(string)
	return c
}

// liveFixture is a redis-server of the test's own, with an append-only
// file written at every command so that a crash and restart keep the
// data, and a wiring over it that
// registers users straight through the store (no argon2 per user).
type liveFixture struct {
	srv    *redisproc.Server // nil on the cluster pass
	rdb    redis.UniversalClient
	admin  *gateway.Gateway
	env    map[string]string
	keys   redisstore.Keys
	jsDir  string
	nameNo int
}

const livePrefix = "sg:"

func newLiveFixture(t *testing.T, tokenTTL time.Duration) *liveFixture {
	t.Helper()
	dir := jsClients(t)
	f := newRedisFixture(t, tokenTTL)
	f.jsDir = dir
	return f
}

// newRedisFixture is newLiveFixture without the JavaScript clients.
func newRedisFixture(t testing.TB, tokenTTL time.Duration) *liveFixture {
	t.Helper()
	redistest.Addr(t)
	if !redistest.Real() {
		t.Skip("live timelines need a real redis-server")
	}
	// A server of its own, which the restart test kills; on the cluster
	// pass the package's cluster, under a prefix of the test's own.
	var srv *redisproc.Server
	var rdb redis.UniversalClient
	prefix := livePrefix
	env := map[string]string{"JWT_SECRET": testSecret,
		// The tests and benchmarks post and connect faster than people, all
		// from one address: no budgets.
		"RATE_LIMIT_MUTATIONS": "off", "RATE_LIMIT_IP": "off"}
	if redistest.ClusterMode() {
		rdb, prefix = redistest.Client(t), redistest.Prefix(t)
		redistest.WithEnv(t, env)
	} else {
		var err error
		srv, err = redisproc.Start("--appendonly", "yes", "--appendfsync", "always")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(srv.Stop)
		rdb = redis.NewClient(&redis.Options{Addr: srv.Addr})
		t.Cleanup(func() { _ = rdb.Close() })
		env["REDIS_URL"] = srv.URL()
	}
	env["REDIS_PREFIX"] = prefix
	admin, err := gateway.New(rdb, gateway.Config{
		Prefix: prefix, Feed: redisstore.DefaultFeed(),
		Tokens: auth.TokenOptions{Method: "HS256", Secret: []byte(testSecret), Issuer: "socialgw",
			Audience: "socialgw-api", TTL: tokenTTL},
		RefreshTTL: time.Hour, PasswordConcurrency: 1, GraphQL: gateway.QueryOptions{},
		Live: gateway.LiveConfig{Off: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	return &liveFixture{srv: srv, rdb: rdb, admin: admin, keys: redisstore.NewKeys(prefix), env: env}
}

type liveUser struct{ id, name, token string }

func (f *liveFixture) user(t testing.TB, prefix string) liveUser {
	t.Helper()
	f.nameNo++
	name := fmt.Sprintf("%s_%d", prefix, f.nameNo)
	ctx := context.Background()
	u, err := f.admin.Store.CreateUser(ctx, social.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.admin.Auth.StartSession(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	return liveUser{id: u.ID, name: name, token: res.AccessToken}
}

// waitSubscribed waits until a gateway listens to u's live channel: from
// then on, every post that lands in u's timeline reaches the subscriber.
func (f *liveFixture) waitSubscribed(t testing.TB, u liveUser) {
	t.Helper()
	f.waitChannel(t, f.keys.LiveUser(u.id))
}

// waitChannel waits until a gateway listens to the sharded channel ch.
func (f *liveFixture) waitChannel(t testing.TB, ch string) {
	t.Helper()
	redistest.Eventually(t, 30*time.Second, "a subscriber of "+ch, func() bool {
		n, err := redistest.Master(t, f.rdb, ch).PubSubShardNumSub(context.Background(), ch).Result()
		return err == nil && n[ch] > 0
	})
}

func must(t testing.TB, r *gatewaytest.Response) *gatewaytest.Response {
	t.Helper()
	if len(r.Errors) > 0 {
		t.Fatalf("unexpected errors: %+v", r.Errors)
	}
	return r
}

func createPost(t testing.TB, base string, u liveUser, content string) string {
	t.Helper()
	r := must(t, gatewaytest.Post(t, base, u.token, `mutation($c: String!) { createPost(input: {content: $c}) { id } }`,
		map[string]any{"c": content}))
	return r.Str("createPost.id")
}

func follow(t *testing.T, base string, u, whom liveUser) {
	t.Helper()
	must(t, gatewaytest.Post(t, base, u.token, `mutation($id: ID!) { follow(userId: $id) { id } }`, map[string]any{"id": whom.id}))
}

func TestLiveTimelineAcrossGateways(t *testing.T) {
	f := newLiveFixture(t, 15*time.Minute)
	a := startGatewayProcess(t, f.env)
	b := startGatewayProcess(t, f.env)
	bob, carol := f.user(t, "bob"), f.user(t, "carol")
	for _, transport := range jsTransports {
		t.Run(transport, func(t *testing.T) {
			alice := f.user(t, "alice")
			follow(t, b.url, alice, bob)
			sub := subscribeJS(t, f.jsDir, transport, a.url, alice.token, "")
			f.waitSubscribed(t, alice)

			// A followed author's post, accepted by the other gateway,
			// after fan-out.
			p1 := createPost(t, b.url, bob, "from bob via "+transport)
			if id, content, author := sub.post(t, 20*time.Second); id != p1 || author != bob.name || content != "from bob via "+transport {
				t.Fatalf("event %s %q by %s, want %s by %s", id, content, author, p1, bob.name)
			}
			// Someone alice does not follow: nothing. Her own post: at once.
			createPost(t, b.url, carol, "not followed")
			own := createPost(t, b.url, alice, "alice herself")
			if id, _, author := sub.post(t, 20*time.Second); id != own || author != alice.name {
				t.Fatalf("event %s by %s, want her own post %s", id, author, own)
			}
			// A post deleted before it reaches her is not sent: the next
			// event is the one after it.
			must(t, gatewaytest.Post(t, b.url, bob.token, `mutation($id: ID!) { deletePost(id: $id) }`,
				map[string]any{"id": createPost(t, b.url, bob, "deleted at once")}))
			p3 := createPost(t, b.url, bob, "after the deleted one")
			for {
				id, content, _ := sub.post(t, 20*time.Second)
				if content == "deleted at once" {
					// It may have been checked before the deletion: then
					// it was visible when it was sent. Only what follows
					// matters here.
					continue
				}
				if id != p3 {
					t.Fatalf("event %s %q, want %s", id, content, p3)
				}
				break
			}
		})
	}
}

func TestLiveTimelineAuth(t *testing.T) {
	f := newLiveFixture(t, 10*time.Second)
	a := startGatewayProcess(t, f.env)
	for _, transport := range jsTransports {
		t.Run(transport+"/no token", func(t *testing.T) {
			m := subscribeJS(t, f.jsDir, transport, a.url, "", "").next(t, 20*time.Second)
			if errorCode(m) != "UNAUTHENTICATED" {
				t.Fatalf("got %v, want an UNAUTHENTICATED error", m)
			}
		})
		t.Run(transport+"/invalid token", func(t *testing.T) {
			m := subscribeJS(t, f.jsDir, transport, a.url, "not-a-token", "").next(t, 20*time.Second)
			switch transport {
			case "sse": // refused before any stream: 401 with the error
				if !strings.Contains(fmt.Sprint(m), "401") && errorCode(m) != "UNAUTHENTICATED" {
					t.Fatalf("got %v, want a 401 refusal", m)
				}
			case "legacy-ws": // the protocol's refusal: connection_error
				if m["type"] != "error" || !strings.Contains(fmt.Sprint(m), "invalid, expired or revoked access token") {
					t.Fatalf("got %v, want connection_error", m)
				}
			default:
				if m["type"] != "error" || m["code"] != float64(4403) {
					t.Fatalf("got %v, want the connection closed with 4403", m)
				}
			}
		})
	}
	t.Run("expired token", func(t *testing.T) {
		// The fixture's tokens live 10s, all three issued now: each
		// subscription then ends with an error telling the client to come
		// back with a new token.
		subs := map[string]*jsSub{}
		for _, transport := range jsTransports {
			u := f.user(t, "expiring")
			subs[transport] = subscribeJS(t, f.jsDir, transport, a.url, u.token, "")
			f.waitSubscribed(t, u)
		}
		for transport, sub := range subs {
			m := sub.next(t, 30*time.Second)
			if errorCode(m) != "UNAUTHENTICATED" || !strings.Contains(fmt.Sprint(m), "expired") {
				t.Fatalf("%s: got %v, want UNAUTHENTICATED: access token expired", transport, m)
			}
		}
	})
}

// TestLiveTimelineShutdown: SIGTERM completes the open subscriptions of
// every transport (clients reconnect elsewhere), and open SSE streams do not
// hold the shutdown until its timeout.
func TestLiveTimelineShutdown(t *testing.T) {
	f := newLiveFixture(t, 15*time.Minute)
	a := startGatewayProcess(t, f.env)
	subs := map[string]*jsSub{}
	for _, transport := range jsTransports {
		u := f.user(t, "alice")
		subs[transport] = subscribeJS(t, f.jsDir, transport, a.url, u.token, "")
		f.waitSubscribed(t, u)
	}
	if took := a.terminate(t); took > 10*time.Second {
		t.Errorf("shutdown took %s with subscriptions open, want well under the 15s timeout", took)
	}
	for transport, sub := range subs {
		if m := sub.next(t, 10*time.Second); m["type"] != "complete" {
			t.Errorf("%s: got %v, want complete", transport, m)
		}
	}
}

// TestLiveTimelineResumeSeam subscribes with since while the followed
// author keeps posting: the client gets every post after since exactly
// once, in order, across the seam between the replay and the live events.
func TestLiveTimelineResumeSeam(t *testing.T) {
	f := newLiveFixture(t, 15*time.Minute)
	a := startGatewayProcess(t, f.env)
	b := startGatewayProcess(t, f.env)
	alice, bob := f.user(t, "alice"), f.user(t, "bob")
	follow(t, a.url, alice, bob)
	for _, transport := range jsTransports {
		t.Run(transport, func(t *testing.T) {
			var ids []string
			for i := range 5 {
				ids = append(ids, createPost(t, b.url, bob, fmt.Sprintf("%s before %d", transport, i)))
			}
			since := ids[1] // the client saw up to the second one
			var mu sync.Mutex
			started := make(chan struct{})
			done := make(chan struct{})
			go func() {
				defer close(done)
				for i := range 20 {
					if i == 5 {
						close(started)
					}
					id := createPost(t, b.url, bob, fmt.Sprintf("%s during %d", transport, i))
					mu.Lock()
					ids = append(ids, id)
					mu.Unlock()
					time.Sleep(10 * time.Millisecond)
				}
			}()
			<-started
			sub := subscribeJS(t, f.jsDir, transport, a.url, alice.token, since)
			<-done
			mu.Lock()
			want := slices.Clone(ids[2:])
			mu.Unlock()
			var got []string
			for len(got) < len(want) {
				id, _, _ := sub.post(t, 30*time.Second)
				got = append(got, id)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("events %v,\nwant %v (every post after %s once, in order)", got, want, since)
			}
			select {
			case m := <-sub.lines:
				t.Fatalf("extra line %v", m)
			case <-time.After(300 * time.Millisecond):
			}
		})
	}
}

// TestLiveTimelineRedisRestart restarts Redis under open subscriptions: they
// keep working without a client-visible error, and what landed while the
// gateway was not listening is caught up.
func TestLiveTimelineRedisRestart(t *testing.T) {
	f := newLiveFixture(t, 15*time.Minute)
	if f.srv == nil {
		t.Skip("restarts one redis-server; on a cluster, a master's failover is TestHubClusterFailover's and faulttest's")
	}
	a := startGatewayProcess(t, f.env)
	b := startGatewayProcess(t, f.env)
	bob := f.user(t, "bob")
	subs := map[string]*jsSub{}
	for _, transport := range jsTransports {
		u := f.user(t, "alice")
		follow(t, a.url, u, bob)
		subs[transport] = subscribeJS(t, f.jsDir, transport, a.url, u.token, "")
		f.waitSubscribed(t, u)
	}
	before := createPost(t, b.url, bob, "before the restart")
	for transport, s := range subs {
		if id, _, _ := s.post(t, 20*time.Second); id != before {
			t.Fatalf("%s: event %s, want %s", transport, id, before)
		}
	}
	f.srv.Kill()
	if err := f.srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// The poster's gateway reconnects on its own too; retry until it has.
	var after string
	redistest.Eventually(t, 30*time.Second, "createPost to succeed after the restart", func() bool {
		r := gatewaytest.Post(t, b.url, bob.token, `mutation { createPost(input: {content: "after the restart"}) { id } }`, nil)
		after = r.Str("createPost.id")
		return after != ""
	})
	for transport, s := range subs {
		if id, _, _ := s.post(t, 30*time.Second); id != after {
			t.Fatalf("%s: event %s after the restart, want %s", transport, id, after)
		}
	}
}

// TestLiveTimelineEmbeddedRedis: without REDIS_URL the embedded Redis has
// only classic pub/sub, and live timelines run on it (one process).
func TestLiveTimelineEmbeddedRedis(t *testing.T) {
	g := launch(t, nil)
	token := registerAndMe(t, g)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(g.url, "http")+"/query",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	q, _ := json.Marshal(map[string]string{"query": `subscription { timelineUpdated { id content } }`})
	for _, m := range []map[string]any{
		{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + token}},
		{"id": "1", "type": "subscribe", "payload": json.RawMessage(q)},
	} {
		if err := wsjson.Write(ctx, c, m); err != nil {
			t.Fatal(err)
		}
	}
	// The subscription is set up when its first home read is done; post
	// until one arrives, then check it is a post of this user.
	got := make(chan string, 1)
	go func() {
		for {
			var m struct {
				Type    string          `json:"type"`
				Payload json.RawMessage `json:"payload"`
			}
			if err := wsjson.Read(ctx, c, &m); err != nil {
				close(got)
				return
			}
			if m.Type == "next" || m.Type == "error" {
				got <- string(m.Payload)
				return
			}
		}
	}()
	var ids []string
	for {
		r := g.query(t, token, `mutation { createPost(input: {content: "embedded"}) { id } }`, nil)
		ids = append(ids, r.Str("createPost.id"))
		select {
		case p, ok := <-got:
			if !ok || !strings.Contains(p, `"content":"embedded"`) || !slices.ContainsFunc(ids, func(id string) bool {
				return strings.Contains(p, `"id":"`+id+`"`)
			}) {
				t.Fatalf("event %s (ok %v), want one of the posts %v", p, ok, ids)
			}
			return
		case <-time.After(500 * time.Millisecond):
		case <-ctx.Done():
			t.Fatal("no event within 20s")
		}
	}
}
