package faulttest_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/faulttest"
	"github.com/socialgw/gateway/internal/redistest"
)

// load sends reads from n clients until stop is closed, and counts what
// came back.
type load struct {
	ok, coded, malformed, slow, internal atomic.Int64
	masked                               atomic.Int64 // internal errors that say neither that the store is unavailable nor that the deadline passed
	firstBad                             atomic.Value
	wait                                 func() // for the clients to return
}

const readDoc = `{ me { id followersCount } timeline(first: 5) { edges { node { id author { name } } } } }`

func startLoad(baseURL string, tokens []string, n int, slowAfter time.Duration, stop <-chan struct{}) *load {
	l := &load{}
	l.wait = clients(n, stop, func(c, _ int) {
		r := faulttest.Query(baseURL, tokens[c%len(tokens)], readDoc, nil)
		switch {
		case r.Took > slowAfter:
			l.slow.Add(1)
		case r.Err != nil:
			l.firstBad.CompareAndSwap(nil, r.Err.Error())
			l.malformed.Add(1)
		case r.OK():
			l.ok.Add(1)
		case r.Code() != "":
			l.coded.Add(1)
			if r.Code() == "INTERNAL_SERVER_ERROR" {
				l.internal.Add(1)
				// A request caught waiting on the dead Redis ends at
				// its deadline instead: as clear, and as coded.
				if m := r.Errors[0].Message; m != "service temporarily unavailable; retry shortly" && !strings.HasPrefix(m, "the request took longer than") {
					l.masked.Add(1)
					l.firstBad.CompareAndSwap(nil, r.Errors[0].Message)
				}
			}
		default:
			l.firstBad.CompareAndSwap(nil, fmt.Sprintf("status %d, errors %+v", r.Status, r.Errors))
			l.malformed.Add(1)
		}
		time.Sleep(5 * time.Millisecond)
	})
	return l
}

func (l *load) String() string {
	return fmt.Sprintf("ok %d, coded errors %d (internal %d), malformed %d, slow %d", l.ok.Load(), l.coded.Load(), l.internal.Load(), l.malformed.Load(), l.slow.Load())
}

// TestRedisOutage stops Redis for 5 s under steady load (killed, then
// started again from its append-only file), with a gateway and a worker
// running. During the outage requests fail fast with a GraphQL error body
// and a code, and /readyz says not ready; within 2 s of Redis returning
// the gateway serves again, the same worker delivers what was queued, and
// the gateway's goroutines return to their baseline.
func TestRedisOutage(t *testing.T) {
	srv := newRedis(t, true)
	u := makeUsers(t, srv.Addr, 4)
	u.followAll(t)
	gw := faulttest.StartGateway(t, "gateway", env(srv, "REQUEST_TIMEOUT", "2s"))
	worker := faulttest.StartWorker(t, "worker", env(srv))

	// Warm up, then take the baseline.
	for i := 0; i < 20; i++ {
		faulttest.MustQuery(t, gw.URL, u.tokens[i%4], readDoc, nil)
	}
	before := u.post(gw.URL, 0, "before the outage")
	if before == "" {
		t.Fatal("post before the outage failed")
	}
	redistest.Eventually(t, 10*time.Second, "fan-out before the outage", func() bool { return count(u.home(t, 1))[before] == 1 })
	baseline := faulttest.Metric(t, gw.URL, "go_goroutines")

	stop := make(chan struct{})
	// A request is slow past the 2 s deadline plus a margin for a machine
	// busy with other builds (the client, under -race, is slow itself).
	l := startLoad(gw.URL, u.tokens, 8, 6*time.Second, stop)
	time.Sleep(500 * time.Millisecond)
	time.Sleep(1100 * time.Millisecond) // the AOF is fsynced every second

	srv.Kill()
	outage := time.Now()
	sawNotReady := false
	for time.Since(outage) < 5*time.Second {
		if faulttest.Ready(gw.URL) == http.StatusServiceUnavailable {
			sawNotReady = true
		}
		time.Sleep(200 * time.Millisecond)
	}
	okDuringOutage := l.ok.Load()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	recovered := redistest.Eventually(t, 10*time.Second, "the gateway serving again", func() bool {
		return faulttest.Query(gw.URL, u.tokens[1], readDoc, nil).OK()
	})
	t.Logf("served again %v after Redis came back", recovered.Round(time.Millisecond))
	if recovered > 2*time.Second {
		t.Errorf("the gateway served again only %v after Redis came back; want within 2s", recovered)
	}
	close(stop)
	l.wait()
	t.Logf("load: %s (ok before the kill and after the restart: %d)", l, okDuringOutage)
	if !sawNotReady {
		t.Error("/readyz never reported 503 during the outage")
	}
	if l.malformed.Load() > 0 || l.slow.Load() > 0 {
		t.Errorf("during the outage some requests hung or had no GraphQL body: %s; first: %v", l, l.firstBad.Load())
	}
	if l.masked.Load() > 0 {
		t.Errorf("%d errors during the outage said neither that the service is temporarily unavailable nor that the deadline passed; first: %v", l.masked.Load(), l.firstBad.Load())
	}
	if l.coded.Load() == 0 {
		t.Error("no request failed during a 5 s outage: the test did not test anything")
	}

	// The same worker, not restarted, delivers what is posted now.
	after := u.post(gw.URL, 0, "after the outage")
	if after == "" {
		t.Fatal("post after the outage failed")
	}
	redistest.Eventually(t, 15*time.Second, "fan-out by the same worker after the outage", func() bool {
		c := count(u.home(t, 2))
		return c[after] == 1 && c[before] == 1
	})
	_ = back

	// Goroutines back to the baseline (idle keep-alive connections of the
	// load's clients are closed first).
	redistest.Eventually(t, 10*time.Second, fmt.Sprintf("goroutines back to the baseline %v", baseline), func() bool {
		return faulttest.Metric(t, gw.URL, "go_goroutines") <= baseline+3
	})
	if worker.Log() == "" {
		t.Log("worker logged nothing")
	}
}

// TestDataLoss: Redis comes back empty after a crash (no persistence), and
// later is flushed while everything runs. Sessions are gone, so old tokens
// fail cleanly with UNAUTHENTICATED; the worker recreates its stream and
// group and fan-out works again, without restarting anything.
func TestDataLoss(t *testing.T) {
	srv := newRedis(t, false)
	gw := faulttest.StartGateway(t, "gateway", env(srv))
	faulttest.StartWorker(t, "worker", env(srv, "FANOUT_MIN_IDLE", "1s"))

	check := func(round string) {
		t.Helper()
		u := makeUsers(t, srv.Addr, 3)
		u.followAll(t)
		id := u.post(gw.URL, 0, "after "+round)
		if id == "" {
			t.Fatalf("%s: createPost failed", round)
		}
		redistest.Eventually(t, 15*time.Second, "fan-out after "+round, func() bool { return count(u.home(t, 2))[id] == 1 })
	}
	old := makeUsers(t, srv.Addr, 2)
	check("start")

	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	r := faulttest.Query(gw.URL, old.tokens[0], `{ me { id } }`, nil)
	if r.Code() != "UNAUTHENTICATED" {
		t.Errorf("a token of a session lost with the data: %+v (status %d, err %v), want UNAUTHENTICATED", r.Errors, r.Status, r.Err)
	}
	check("a restart that lost everything")

	if err := old.rdb.FlushAll(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	check("FLUSHALL")
}
