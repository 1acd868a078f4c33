package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// Targets of the Redis-heavy alias attacks (docs/performance.md, "Redis
// work per request"): each request costs Redis at most 50 ms of CPU, and
// another client's median stays within 2× of its own while they run. The
// first does not depend on the machine's load and fails the test when missed;
// the second does (the attacker and the probe share the test machine's
// cores with the gateway), so the test reports it, and fails on it only
// with REQUIRE_ATTACK_TARGETS=1.
const (
	maxRedisCPUPerRequest = 50 * time.Millisecond
	maxNeighbourSlowdown  = 2.0
)

// TestRedisHeavyAttacks measures, on a real redis-server, the Redis CPU
// (INFO cpu: used_cpu_user + used_cpu_sys) of two alias attacks that once
// escaped the cost model (100 aliased userTimeline pages over an author's
// 4 000 posts hidden from the attacker; 75 aliased commonFollowing pages
// of two users following 10 000 each), then another client's median
// latency while the attacks run over HTTP and over a websocket that does
// not read, each attacker a client address of its own under the default
// Redis-work budget.
func TestRedisHeavyAttacks(t *testing.T) {
	redistest.Slow(t, "seeds 15 000 users and 4 000 posts")
	// The production default of the Redis-work budget; the clients are
	// told apart by X-Forwarded-For from a trusted proxy.
	s := gatewaytest.New(t, gatewaytest.Options{Abuse: &gateway.Abuse{
		RateLimits:     map[string]ratelimit.Limit{ratelimit.RuleRedisWork: gateway.DefaultRateLimits()[ratelimit.RuleRedisWork]},
		TrustedProxies: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")},
	}})
	if !redistest.Real() {
		t.Skip("needs a real redis-server for INFO cpu")
	}
	// The production defaults of the limits that bound these attacks.
	url := gatewaytest.Serve(t, s.NewQueryHandler(gateway.QueryOptions{Limits: gqlguard.DefaultLimits(20000),
		MaxBodyBytes: 1 << 20, MaxConcurrent: 32, QueueWait: 500 * time.Millisecond, RequestTimeout: 10 * time.Second}))
	hidden, common, page := seedHeavy(t, s)
	// Another client reads a page of 20 posts of an ordinary author.
	probe := func() time.Duration {
		start := time.Now()
		if status, body := postFrom(t, url, "198.51.100.1", page); status != http.StatusOK || strings.Contains(body, `"errors"`) {
			t.Errorf("probe: %d %s", status, body)
		}
		return time.Since(start)
	}

	// Anonymous viewers read a user's public posts only; signed-in ones
	// outside the audience scan the hidden posts, the worst case (a user
	// each, as an address each: the budget is also the user's).
	const n = 20
	anonymous, signedIn := make([]string, n), make([]string, n)
	for i := range signedIn {
		signedIn[i] = s.Register(t, fmt.Sprintf("attacker%d", i)).Token
	}
	for _, a := range []struct {
		name   string
		tokens []string
		doc    string
	}{
		{"hidden posts, anonymous", anonymous, hidden}, {"hidden posts, signed in", signedIn, hidden}, {"common following", anonymous, common},
	} {
		cpu, stats, own := redisCPU(t, s.Redis), commandStats(t, s.Redis), processCPU(t)
		for i := range n {
			// A client each: the figure is a request's, not a budget's.
			if status, body := postAs(t, url, fmt.Sprintf("192.0.2.%d", i), a.tokens[i], a.doc); status != http.StatusOK || strings.Contains(body, `"errors"`) {
				t.Fatalf("%s: %d %.300s", a.name, status, body)
			}
		}
		per := (redisCPU(t, s.Redis) - cpu) / n
		t.Logf("%s: %.1f ms of Redis CPU a request (the test's process: %.1f ms); by command: %s", a.name, per.Seconds()*1000,
			(processCPU(t)-own).Seconds()*1000/n, topCommands(stats, commandStats(t, s.Redis), n))
		if per > maxRedisCPUPerRequest {
			t.Errorf("%s: %v of Redis CPU a request, over %v", a.name, per, maxRedisCPUPerRequest)
		}
	}

	// For comparison with earlier figures: 60 probes back to back, the
	// machine busy with the probe alone.
	t.Logf("another client's p50 alone, back to back: %v", median(repeat(60, probe)))

	// Each attacker is a fresh client address and user, signed in (the
	// costlier case of the hidden posts), sending the two documents back
	// to back whatever the answers, from a process of its own (so that
	// its CPU time is told apart from the gateway's).
	var attackers atomic.Int32
	httpAttack := func(ctx context.Context) time.Duration {
		i := attackers.Add(1)
		return attackFrom(ctx, t, url, fmt.Sprintf("203.0.113.%d", i), signedIn[int(i)%n], hidden, common)
	}
	during := map[string][2]time.Duration{} // alone, during
	for _, n := range []int{1, 2} {
		name := fmt.Sprintf("%d HTTP attacker(s)", n)
		during[name] = underAttack(t, s.Redis, name, n, probe, httpAttack)
	}
	own := redis.NewClient(&redis.Options{Addr: redistest.Addr(t)})
	defer own.Close()
	ping := func() time.Duration {
		start := time.Now()
		own.Ping(context.Background())
		return time.Since(start)
	}
	pings := underAttack(t, s.Redis, "PING, 1 HTTP attacker", 1, ping, httpAttack)
	t.Logf("a PING on a connection of its own: p50 %v alone, %v during 1 HTTP attacker", pings[0], pings[1])
	during["an unread websocket"] = underAttack(t, s.Redis, "an unread websocket", 1, probe, func(ctx context.Context) time.Duration {
		unreadSocket(ctx, t, url, hidden, common)
		return 0 // in the test's process: its CPU counts as the gateway's
	})
	for name, p50 := range during {
		alone, p50 := p50[0], p50[1]
		t.Logf("another client's p50 during %s: %v, %v just before alone (%.2f×)", name, p50, alone, ratio(p50, alone))
		if ratio(p50, alone) > maxNeighbourSlowdown {
			missed(t, "during %s another client's p50 is %v, %.2f× its %v alone", name, p50, ratio(p50, alone), alone)
		}
	}
}

// missed reports a target not met: a failure with REQUIRE_ATTACK_TARGETS=1.
func missed(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv("REQUIRE_ATTACK_TARGETS") == "1" {
		t.Errorf(format, args...)
		return
	}
	t.Logf("target missed: "+format, args...)
}

// seedHeavy writes the data of both attacks and returns their documents,
// and that of an ordinary page.
func seedHeavy(t *testing.T, s *gatewaytest.Server) (hidden, common, page string) {
	t.Helper()
	ctx := context.Background()
	hash, err := auth.NewPasswords(1).Hash("password123")
	if err != nil {
		t.Fatal(err)
	}
	users := make([]string, 15002)
	parallel(t, len(users), func(i int) error {
		u, err := s.Store.CreateUser(ctx, social.NewAccount{Name: fmt.Sprintf("heavy_%d", i), Email: fmt.Sprintf("heavy_%d@example.com", i), PasswordHash: hash})
		if err == nil {
			users[i] = u.ID
		}
		return err
	})
	// Two users following 10 000 each, 5 000 of them in common.
	a, b := users[0], users[1]
	parallel(t, 10000, func(i int) error {
		if err := s.Store.Follow(ctx, a, users[2+i]); err != nil {
			return err
		}
		return s.Store.Follow(ctx, b, users[2+5000+i])
	})
	// An author of 4 000 posts shown to one other user only.
	author, reader := users[2], users[3]
	parallel(t, 4000, func(i int) error {
		_, err := s.Store.CreatePost(ctx, author, social.NewPost{Content: "hidden " + strconv.Itoa(i), OnlyTo: []string{reader}})
		return err
	})
	// An ordinary author of 30 public posts.
	for i := range 30 {
		if _, err := s.Store.CreatePost(ctx, users[4], social.NewPost{Content: "public " + strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	page = fmt.Sprintf(`{ userTimeline(userId: %q, first: 20) { edges { node { id content createdAt author { id name } likesCount commentsCount } } } }`, users[4])
	var hb, cb strings.Builder
	hb.WriteString("{")
	cb.WriteString("{")
	// As many aliases as MAX_FIELDS (300) lets through, with distinct
	// arguments so that no two are one read.
	for i := range 100 {
		fmt.Fprintf(&hb, " a%d: userTimeline(userId: %q, first: %d) { pageInfo { hasNextPage } }", i, author, 100-i%50)
	}
	for i := range 75 {
		fmt.Fprintf(&cb, " a%d: user(id: %q) { commonFollowing(with: %q, first: %d) { edges { cursor } } }", i, a, b, 100-i%50)
	}
	hb.WriteString(" }")
	cb.WriteString(" }")
	return hb.String(), cb.String(), page
}

// underAttack returns the median of 60 probes, one every 50 ms, just
// before the attack (the machine's other load changes over a run: each
// phase is compared with its own moment) and while attack runs from n
// goroutines. It logs the CPU time the attack took: the test's own
// process (the gateway, the probe and any attacker that runs in it), the
// attackers' processes (what attack returns) and Redis.
func underAttack(t *testing.T, rdb redis.UniversalClient, name string, n int, probe func() time.Duration, attack func(ctx context.Context) time.Duration) [2]time.Duration {
	t.Helper()
	spaced := func() time.Duration { time.Sleep(50 * time.Millisecond); return probe() }
	alone := median(repeat(60, spaced))
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var attackersCPU atomic.Int64
	self, rcpu, start := processCPU(t), redisCPU(t, rdb), time.Now()
	for range n {
		wg.Add(1)
		go func() { defer wg.Done(); attackersCPU.Add(int64(attack(ctx))) }()
	}
	time.Sleep(time.Second) // the attack under way
	p50 := median(repeat(60, spaced))
	cancel()
	wg.Wait()
	// What the server still runs of the attack ends before the next
	// measurement (and before the test's Redis closes).
	time.Sleep(3 * time.Second)
	t.Logf("%s: CPU time over %.1f s: the test's process (gateway, probe) %v, the attackers' processes %v, Redis %v",
		name, time.Since(start).Seconds(), (processCPU(t) - self).Round(time.Millisecond),
		time.Duration(attackersCPU.Load()).Round(time.Millisecond), (redisCPU(t, rdb) - rcpu).Round(time.Millisecond))
	return [2]time.Duration{alone, p50}
}

// unreadSocket sends 300 heavy operations on one websocket and reads
// nothing until ctx ends.
func unreadSocket(ctx context.Context, t *testing.T, url string, docs ...string) {
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/query", &websocket.DialOptions{
		Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: http.Header{"X-Forwarded-For": {"203.0.113.200"}}})
	if err != nil {
		if ctx.Err() == nil {
			t.Errorf("dial: %v", err)
		}
		return
	}
	defer c.CloseNow()
	gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{Type: "connection_init"})
	if m, err := gatewaytest.WSNext(ctx, c); err != nil || m.Type != "connection_ack" {
		t.Errorf("init: %+v %v", m, err)
		return
	}
	var sent atomic.Int32
	for i := range 300 {
		payload := fmt.Sprintf(`{"query":%s}`, gatewaytest.Quote(docs[i%len(docs)]))
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		err := c.Write(wctx, websocket.MessageText, []byte(`{"id":"`+strconv.Itoa(i)+`","type":"subscribe","payload":`+payload+`}`))
		cancel()
		if err != nil {
			break // held back by TCP: the server reads no further
		}
		sent.Add(1)
	}
	t.Logf("the unread websocket sent %d operations", sent.Load())
	<-ctx.Done()
}

// postFrom posts a query as the client at addr (X-Forwarded-For, from a
// trusted proxy) and returns the status and body.
func postFrom(t *testing.T, url, addr, query string) (int, string) {
	return postAs(t, url, addr, "", query)
}

// postAs is postFrom with an access token ("": anonymous).
func postAs(t *testing.T, url, addr, token, query string) (int, string) {
	body, _ := json.Marshal(map[string]string{"query": query})
	req, _ := http.NewRequest(http.MethodPost, url+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Forwarded-For", addr)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Errorf("post: %v", err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func parallel(t *testing.T, n int, fn func(i int) error) {
	t.Helper()
	var wg sync.WaitGroup
	var next atomic.Int64
	var failed atomic.Value
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := fn(i); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := failed.Load().(error); err != nil {
		t.Fatal(err)
	}
}

func repeat(n int, f func() time.Duration) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		out[i] = f()
	}
	return out
}

func median(d []time.Duration) time.Duration {
	slices.Sort(d)
	return d[len(d)/2]
}

func ratio(a, b time.Duration) float64 { return float64(a) / float64(b) }

// redisCPU is the CPU time (user and system) the Redis servers have used,
// summed over the masters of a cluster.
func redisCPU(tb testing.TB, rdb redis.UniversalClient) time.Duration {
	tb.Helper()
	var mu sync.Mutex
	total := 0.0
	eachInfo(tb, rdb, "cpu", func(line string) {
		k, v, _ := strings.Cut(line, ":")
		if k == "used_cpu_user" || k == "used_cpu_sys" {
			f, _ := strconv.ParseFloat(v, 64)
			mu.Lock()
			total += f
			mu.Unlock()
		}
	})
	return time.Duration(total * float64(time.Second))
}

// callsSuffix marks, in commandStats, a command's calls rather than its
// microseconds.
var callsSuffix = map[bool]string{false: "", true: " calls"}

// commandStats is INFO commandstats: microseconds spent in each command,
// and its calls under the name with callsSuffix.
func commandStats(tb testing.TB, rdb redis.UniversalClient) map[string]float64 {
	tb.Helper()
	var mu sync.Mutex
	out := map[string]float64{}
	eachInfo(tb, rdb, "commandstats", func(line string) {
		name, fields, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":")
		if !ok || name == line {
			return
		}
		for f := range strings.SplitSeq(fields, ",") {
			key, v, _ := strings.Cut(f, "=")
			if key == "usec" || key == "calls" {
				u, _ := strconv.ParseFloat(v, 64)
				mu.Lock()
				out[name+callsSuffix[key == "calls"]] += u
				mu.Unlock()
			}
		}
	})
	return out
}

// eachInfo calls f with every line of INFO section of every server that
// holds data: on a cluster, a client's INFO reaches one node, and figures
// read from different nodes do not subtract.
func eachInfo(tb testing.TB, rdb redis.UniversalClient, section string, f func(line string)) {
	tb.Helper()
	var mu sync.Mutex // EachServer calls on every master at once
	err := redisstore.EachServer(context.Background(), rdb, func(ctx context.Context, c redis.UniversalClient) error {
		info, err := c.Info(ctx, section).Result()
		mu.Lock()
		defer mu.Unlock()
		for line := range strings.SplitSeq(info, "\r\n") {
			f(line)
		}
		return err
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// topCommands names the three commands that took the most time between
// two commandstats, per request of n.
func topCommands(before, after map[string]float64, n int) string {
	type use struct {
		name string
		ms   float64
	}
	var uses []use
	for k, v := range after {
		if d := v - before[k]; d > 0 && !strings.HasSuffix(k, callsSuffix[true]) {
			uses = append(uses, use{k, d / 1000 / float64(n)})
		}
	}
	slices.SortFunc(uses, func(a, b use) int { return int(b.ms*1000 - a.ms*1000) })
	var parts []string
	for i := 0; i < len(uses) && i < 3; i++ {
		calls := (after[uses[i].name+callsSuffix[true]] - before[uses[i].name+callsSuffix[true]]) / float64(n)
		parts = append(parts, fmt.Sprintf("%s %.1f ms (%.0f calls)", uses[i].name, uses[i].ms, calls))
	}
	return strings.Join(parts, ", ")
}
