package faulttest_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/faulttest"
	"github.com/socialgw/gateway/internal/redistest"
)

// TestGracefulShutdown sends SIGTERM to a gateway while clients post
// through it. It exits cleanly within its shutdown timeout; every request
// it answered has a well-formed GraphQL body; every post it acknowledged
// is queued and fanned out by the worker (nothing is lost from the queue).
func TestGracefulShutdown(t *testing.T) {
	srv := newRedis(t, false)
	u := makeUsers(t, srv.Addr, 4)
	u.followAll(t)
	faulttest.StartWorker(t, "worker", env(srv, "FANOUT_MIN_IDLE", "1s", "HOME_CAP", "100000"))
	gw := faulttest.StartGateway(t, "gateway", env(srv, "HOME_CAP", "100000", "SHUTDOWN_TIMEOUT", "10s"))

	var mu sync.Mutex
	var acked []string
	var malformed []string
	stop := make(chan struct{})
	wait := clients(16, stop, func(c, n int) {
		r := faulttest.Query(gw.URL, u.tokens[0], createPost, map[string]any{"c": fmt.Sprintf("s%d-%d", c, n)})
		mu.Lock()
		switch {
		case r.OK():
			acked = append(acked, r.Data["createPost"].(map[string]any)["id"].(string))
		case r.Status != 0 && r.Err != nil:
			malformed = append(malformed, r.Err.Error())
		}
		mu.Unlock()
	})
	time.Sleep(time.Second)
	start := time.Now()
	if err := gw.Terminate(t, 15*time.Second); err != nil {
		t.Errorf("the gateway exited with %v after SIGTERM", err)
	}
	t.Logf("stopped %v after SIGTERM", time.Since(start).Round(time.Millisecond))
	close(stop)
	wait()
	if len(malformed) > 0 {
		t.Errorf("%d answers without a GraphQL body, first: %s", len(malformed), malformed[0])
	}
	if !strings.Contains(gw.Log(), `"msg":"stopped"`) {
		t.Errorf("the gateway did not log a clean stop")
	}
	redistest.Eventually(t, 30*time.Second, fmt.Sprintf("the %d acknowledged posts fanned out", len(acked)), func() bool {
		c := count(u.home(t, 3))
		for _, id := range acked {
			if c[id] != 1 {
				return false
			}
		}
		return true
	})
}

// TestSoak runs 200 clients mixing reads and writes against two gateways
// and a worker for SOAK_SECONDS (20 by default): no request may end in
// INTERNAL_SERVER_ERROR or without a GraphQL body, and the gateways'
// goroutines and heap stay flat (the most seen over 2 s at the end of the
// run against the same a third in), and goroutines return to their
// baseline when the clients stop.
func TestSoak(t *testing.T) {
	seconds := 20
	if s := os.Getenv("SOAK_SECONDS"); s != "" {
		fmt.Sscan(s, &seconds)
	}
	srv := newRedis(t, false)
	u := makeUsers(t, srv.Addr, 200)
	for i := 1; i < 200; i++ { // a network: everyone follows a few
		for _, j := range []int{0, (i * 7) % 200, (i * 13) % 200} {
			if j != i {
				if err := u.store.Follow(t.Context(), u.ids[i], u.ids[j]); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	gws := []*faulttest.Proc{
		faulttest.StartGateway(t, "gateway A", env(srv, "REQUEST_TIMEOUT", "5s")),
		faulttest.StartGateway(t, "gateway B", env(srv, "REQUEST_TIMEOUT", "5s")),
	}
	faulttest.StartWorker(t, "worker", env(srv))
	post := u.post(gws[0].URL, 0, "soak target")
	for i := 0; i < 20; i++ {
		faulttest.MustQuery(t, gws[i%2].URL, u.tokens[i], readDoc, nil)
	}
	baseline := []float64{faulttest.Metric(t, gws[0].URL, "go_goroutines"), faulttest.Metric(t, gws[1].URL, "go_goroutines")}

	var ok, coded, internal, bad atomic.Int64
	var firstBad atomic.Value
	stop := make(chan struct{})
	// Each client its own random sequence, used by it alone.
	rngs := make([]*rand.Rand, 200)
	for c := range rngs {
		rngs[c] = rand.New(rand.NewPCG(uint64(c), 7))
	}
	wait := clients(len(rngs), stop, func(c, n int) {
		url := gws[c%2].URL
		var r faulttest.Result
		switch k := rngs[c].IntN(10); {
		case k < 7:
			r = faulttest.Query(url, u.tokens[c], readDoc, nil)
		case k < 8:
			r = faulttest.Query(url, u.tokens[c], createPost, map[string]any{"c": fmt.Sprintf("soak %d-%d", c, n)})
		case k < 9:
			r = faulttest.Query(url, u.tokens[c], `mutation($p: ID!) { likePost(postId: $p) { likesCount } }`, map[string]any{"p": post})
		default:
			r = faulttest.Query(url, u.tokens[c], `mutation($p: ID!) { addComment(postId: $p, content: "soak") { id } }`, map[string]any{"p": post})
		}
		switch {
		case r.OK():
			ok.Add(1)
		case r.Err != nil:
			bad.Add(1)
			firstBad.CompareAndSwap(nil, r.Err.Error())
		case r.Code() == "INTERNAL_SERVER_ERROR":
			internal.Add(1)
			firstBad.CompareAndSwap(nil, r.Errors[0].Message)
		default:
			coded.Add(1)
		}
	})
	// One reading is the most seen over 2 s (8 samples): a single sample
	// catches the number of requests in flight at that instant, which
	// swings with the scheduler on a busy machine.
	type sample struct{ goroutines, heap float64 }
	read := func() []sample {
		out := make([]sample, len(gws))
		for k := 0; k < 8; k++ {
			for i, g := range gws {
				out[i].goroutines = max(out[i].goroutines, faulttest.Metric(t, g.URL, "go_goroutines"))
				out[i].heap = max(out[i].heap, faulttest.Metric(t, g.URL, "go_memstats_heap_inuse_bytes"))
			}
			time.Sleep(250 * time.Millisecond)
		}
		return out
	}
	run := time.Duration(seconds) * time.Second
	time.Sleep(run/3 - time.Second)
	early := read()
	time.Sleep(run - run/3 - 3*time.Second)
	late := read()
	close(stop)
	wait()
	t.Logf("%d clients for %ds: %d ok, %d coded errors, %d internal, %d without a GraphQL body", 200, seconds, ok.Load(), coded.Load(), internal.Load(), bad.Load())
	t.Logf("goroutines and heap in use (A, B): at a third %v, at the end %v", early, late)
	if internal.Load() > 0 || bad.Load() > 0 {
		t.Errorf("%d internal errors and %d answers without a GraphQL body; first: %v", internal.Load(), bad.Load(), firstBad.Load())
	}
	for i := range gws {
		// Flat: the last reading is not far above the reading a third in,
		// or at least within what the gateway's 100 clients can hold in
		// flight (a connection's goroutine and a request's few): the
		// readings a third in swing with how many requests happen to be
		// executing rather than queued (seen: 134 a third in, 270 at the
		// end, on an otherwise idle machine). A leak of one goroutine per
		// hundred requests (over 20 000 requests a gateway) passes both
		// bounds within the run; the return to the baseline below catches
		// any smaller one that stays.
		inFlight := baseline[i] + 3*100
		if late[i].goroutines > early[i].goroutines*1.5+50 && late[i].goroutines > inFlight {
			t.Errorf("gateway %d: goroutines grew from %v to %v under steady load", i, early[i].goroutines, late[i].goroutines)
		}
		if late[i].heap > early[i].heap*2+32<<20 {
			t.Errorf("gateway %d: heap in use grew from %.0f to %.0f bytes under steady load", i, early[i].heap, late[i].heap)
		}
		redistest.Eventually(t, 15*time.Second, "goroutines back to the baseline", func() bool {
			return faulttest.Metric(t, gws[i].URL, "go_goroutines") <= baseline[i]+3
		})
	}
}
