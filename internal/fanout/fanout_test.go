package fanout_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// queue is a stream and dead-letter stream of their own.
func queue(tb testing.TB) (redis.UniversalClient, fanout.Config) {
	tb.Helper()
	p := redistest.Prefix(tb)
	return redistest.Client(tb), fanout.Config{Stream: p + "{fanout}:jobs", Dead: p + "{fanout}:dead"}
}

func newWorker(tb testing.TB, rdb redis.UniversalClient, cfg fanout.Config, h fanout.Handler) *fanout.Worker {
	tb.Helper()
	w, err := fanout.New(rdb, cfg, h, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

func addJobs(tb testing.TB, rdb redis.UniversalClient, stream string, n int) {
	tb.Helper()
	for i := 0; i < n; i++ {
		if err := rdb.XAdd(context.Background(), &redis.XAddArgs{Stream: stream, Values: []any{"n", i}}).Err(); err != nil {
			tb.Fatal(err)
		}
	}
}

func TestJobsQueuedBeforeTheGroupExist(t *testing.T) {
	rdb, cfg := queue(t)
	addJobs(t, rdb, cfg.Stream, 3)
	var seen sync.Map
	w := newWorker(t, rdb, cfg, func(_ context.Context, job map[string]string) error {
		seen.Store(job["n"], true)
		return nil
	})
	n, err := w.Drain(context.Background())
	if err != nil || n != 3 {
		t.Fatalf("drained %d, %v", n, err)
	}
	for i := 0; i < 3; i++ {
		if _, ok := seen.Load(fmt.Sprint(i)); !ok {
			t.Fatalf("job %d not handled", i)
		}
	}
	if l := rdb.XLen(context.Background(), cfg.Stream).Val(); l != 0 {
		t.Fatalf("acknowledged jobs left in the stream: %d", l)
	}
}

func TestFailingJobGoesToDeadLetters(t *testing.T) {
	rdb, cfg := queue(t)
	cfg.MaxDeliveries, cfg.MinIdle, cfg.ClaimEvery = 3, time.Millisecond, time.Millisecond
	var runs atomic.Int64
	w := newWorker(t, rdb, cfg, func(context.Context, map[string]string) error {
		runs.Add(1)
		return errors.New("always fails")
	})
	addJobs(t, rdb, cfg.Stream, 1)
	ctx := context.Background()
	redistest.Eventually(t, 10*time.Second, "the dead letter", func() bool {
		if _, err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		return w.Stats().DeadLettered == 1
	})
	if runs.Load() != 3 {
		t.Fatalf("handler ran %d times, want 3", runs.Load())
	}
	dead, err := rdb.XRange(ctx, cfg.Dead, "-", "+").Result()
	if err != nil || len(dead) != 1 || dead[0].Values["job.n"] != "0" || dead[0].Values["deliveries"] != "4" {
		t.Fatalf("dead letters: %+v, %v", dead, err)
	}
	queued, deadN, err := fanout.BacklogAll(ctx, rdb, []fanout.Queue{{Stream: cfg.Stream, Dead: cfg.Dead}})
	if err != nil || queued != 0 || deadN != 1 {
		t.Fatalf("backlog %d, dead %d, %v", queued, deadN, err)
	}
	if st := w.Stats(); st.Failed != 3 || st.Processed != 0 {
		t.Fatalf("stats %+v", st)
	}
}

func TestRunFinishesTheRunningJobOnShutdown(t *testing.T) {
	rdb, cfg := queue(t)
	cfg.Block = 50 * time.Millisecond
	started, release := make(chan struct{}), make(chan struct{})
	w := newWorker(t, rdb, cfg, func(ctx context.Context, _ map[string]string) error {
		close(started)
		<-release
		return ctx.Err() // the job's context is not cancelled by shutdown
	})
	addJobs(t, rdb, cfg.Stream, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	<-started
	cancel()
	select {
	case <-done:
		t.Fatal("Run returned while a job was running")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after the job finished")
	}
	if st := w.Stats(); st.Processed != 1 || st.Failed != 0 {
		t.Fatalf("stats %+v", st)
	}
}

// failAfter makes a client's pipelines of scripts fail once n of them ran:
// a worker dying in the middle of a fan-out.
type failAfter struct {
	n    atomic.Int64
	left int64
}

func (f *failAfter) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (f *failAfter) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (f *failAfter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if len(cmds) > 0 && cmds[0].Name() == "evalsha" && f.n.Add(1) > f.left {
			return errors.New("worker killed")
		}
		return next(ctx, cmds)
	}
}

// TestWorkerCrash kills fan-out workers two ways — one reads jobs and dies
// before acknowledging any, another dies halfway through delivering a
// post — and checks that a second worker finishes everything, with each
// post exactly once in each follower's home list.
func TestWorkerCrash(t *testing.T) {
	ctx := context.Background()
	rdb := redistest.Client(t)
	prefix := redistest.Prefix(t)
	cfg := redisstore.DefaultFeed()
	cfg.Mode = redisstore.Push
	cfg.FanoutBatch = 4 // several pipelines per post
	s := redisstore.New(rdb, prefix)
	if err := s.SetFeed(cfg); err != nil {
		t.Fatal(err)
	}
	author := user(t, s, "author")
	var followers []string
	for i := 0; i < 13; i++ {
		f := user(t, s, fmt.Sprint("f", i))
		if err := s.Follow(ctx, f, author); err != nil {
			t.Fatal(err)
		}
		followers = append(followers, f)
	}
	// The follows queued their notifications' jobs; this test is about
	// the posts' jobs alone.
	if err := rdb.Del(ctx, s.Keys().FanoutStream()).Err(); err != nil {
		t.Fatal(err)
	}
	var posts []string
	for i := 0; i < 5; i++ {
		p, err := s.CreatePost(ctx, author, social.NewPost{Content: fmt.Sprint("post ", i)})
		if err != nil {
			t.Fatal(err)
		}
		posts = append(posts, p.ID)
	}
	qcfg := fanout.Config{Stream: s.Keys().FanoutStream(), Dead: s.Keys().FanoutDead(), MinIdle: 30 * time.Millisecond, ClaimEvery: time.Millisecond}

	// Worker 1 takes two jobs and dies before acknowledging them.
	if err := rdb.XGroupCreateMkStream(ctx, qcfg.Stream, fanout.DefaultGroup, "0").Err(); err != nil {
		t.Fatal(err)
	}
	taken, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: fanout.DefaultGroup, Consumer: "killed-1", Streams: []string{qcfg.Stream, ">"}, Count: 2, Block: -1,
	}).Result()
	if err != nil || len(taken[0].Messages) != 2 {
		t.Fatalf("worker 1 read %v, %v", taken, err)
	}
	// Worker 2 dies after the first pipeline of deliveries of the next job.
	crashing := redistest.Client(t)
	crashing.AddHook(&failAfter{left: 1})
	cs := redisstore.New(crashing, prefix)
	if err := cs.SetFeed(cfg); err != nil {
		t.Fatal(err)
	}
	c2 := qcfg
	c2.Consumer, c2.Read = "killed-2", 1
	w2 := newWorker(t, crashing, c2, cs.HandleFanoutJob)
	if _, err := w2.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if w2.Stats().Failed == 0 {
		t.Fatal("worker 2 did not fail halfway")
	}

	// Worker 3 finishes: the three jobs left pending are claimed once idle.
	c3 := qcfg
	c3.Consumer = "survivor"
	w3 := newWorker(t, rdb, c3, s.HandleFanoutJob)
	redistest.Eventually(t, 10*time.Second, "every job done", func() bool {
		if _, err := w3.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		return rdb.XLen(ctx, qcfg.Stream).Val() == 0
	})
	if st := w3.Stats(); st.Claimed < 3 || st.Failed != 0 || st.DeadLettered != 0 {
		t.Fatalf("survivor stats %+v", st)
	}
	want := fmt.Sprint(reverse(posts))
	for _, f := range followers {
		list, err := rdb.LRange(ctx, s.Keys().Home(f), 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		ids := make([]string, len(list))
		for i, e := range list {
			ids[i], _, _ = strings.Cut(e, ":")
		}
		if fmt.Sprint(ids) != want {
			t.Fatalf("follower %s's home list %v, want each of %s once", f, list, want)
		}
	}
}

func reverse(s []string) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[len(s)-1-i] = v
	}
	return out
}

var userSeq atomic.Int64

func user(tb testing.TB, s *redisstore.Store, name string) string {
	tb.Helper()
	name = fmt.Sprintf("%s_%d", name, userSeq.Add(1))
	u, err := s.CreateUser(context.Background(), social.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: "x"})
	if err != nil {
		tb.Fatal(err)
	}
	return u.ID
}

// TestRecoversFromDataLoss: the stream and its group vanish (FLUSHALL, a
// Redis that came back empty) while the worker runs. Whatever command
// meets the NOGROUP first — the stale-job claim, which runs before the
// read — the worker makes the stream and group again and goes on with the
// jobs queued afterwards, without a restart.
func TestRecoversFromDataLoss(t *testing.T) {
	ctx := context.Background()
	rdb, cfg := queue(t)
	cfg.MinIdle, cfg.ClaimEvery, cfg.Block = time.Hour, time.Nanosecond, 10*time.Millisecond
	var done atomic.Int64
	w := newWorker(t, rdb, cfg, func(context.Context, map[string]string) error { done.Add(1); return nil })
	runCtx, cancel := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { _ = w.Run(runCtx); close(stopped) }()
	defer func() { cancel(); <-stopped }()

	addJobs(t, rdb, cfg.Stream, 3)
	redistest.Eventually(t, 10*time.Second, "the first jobs", func() bool { return done.Load() == 3 })
	for round := 0; round < 3; round++ {
		// The data is lost: the stream and its group are gone.
		if err := rdb.Del(ctx, cfg.Stream).Err(); err != nil {
			t.Fatal(err)
		}
		// The worker meets NOGROUP and makes the stream and group again.
		redistest.Eventually(t, 10*time.Second, "the group made again", func() bool {
			groups, err := rdb.XInfoGroups(ctx, cfg.Stream).Result()
			return err == nil && len(groups) == 1
		})
		addJobs(t, rdb, cfg.Stream, 2)
		want := int64(5 + 2*round)
		redistest.Eventually(t, 10*time.Second, "jobs queued after the loss", func() bool { return done.Load() == want })
	}
}

// TestPrunesConsumersOfDeadWorkers: a worker that died leaves its consumer
// in the group; once its entries are claimed and it has been idle long
// enough, a live worker removes it. A consumer with pending entries stays.
func TestPrunesConsumersOfDeadWorkers(t *testing.T) {
	ctx := context.Background()
	rdb, cfg := queue(t)
	if err := rdb.XGroupCreateMkStream(ctx, cfg.Stream, fanout.DefaultGroup, "0").Err(); err != nil {
		t.Fatal(err)
	}
	addJobs(t, rdb, cfg.Stream, 2)
	// "dead" took a job and died; "idle" only ever read nothing.
	for _, c := range []struct {
		name  string
		count int64
	}{{"dead", 1}} {
		if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: fanout.DefaultGroup, Consumer: c.name, Streams: []string{cfg.Stream, ">"}, Count: c.count, Block: -1}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.XGroupCreateConsumer(ctx, cfg.Stream, fanout.DefaultGroup, "idle").Err(); err != nil {
		t.Fatal(err)
	}
	cfg.Consumer = "live"
	cfg.MinIdle, cfg.ClaimEvery, cfg.Block = 20*time.Millisecond, time.Nanosecond, time.Millisecond
	var handled atomic.Int64
	w := newWorker(t, rdb, cfg, func(context.Context, map[string]string) error { handled.Add(1); return nil })
	names := func() []string {
		cs, err := rdb.XInfoConsumers(ctx, cfg.Stream, fanout.DefaultGroup).Result()
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, c := range cs {
			out = append(out, c.Name)
		}
		return out
	}
	redistest.Eventually(t, 10*time.Second, "dead consumers removed", func() bool {
		if _, err := w.Drain(ctx); err != nil {
			t.Fatal(err)
		}
		n := names()
		return len(n) == 1 && n[0] == "live"
	})
	if handled.Load() != 2 {
		t.Fatalf("handled %d jobs, want 2 (the dead worker's job claimed, the other read)", handled.Load())
	}
}

// TestIdleWorkersKeepEachOther: two live workers that have each handled
// a job and then have nothing to do never remove each other's consumer,
// however long they wait. Before Redis 7.2 a blocking read that returns
// nothing does not reset a consumer's idle time in XINFO, so liveness
// comes from a key each worker renews; this runs on the Redis the tests
// start (7.0 in CI).
func TestIdleWorkersKeepEachOther(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rdb, cfg := queue(t)
	cfg.MinIdle, cfg.Block, cfg.Read = 20*time.Millisecond, 10*time.Millisecond, 1
	// deadAfter = max(2 MinIdle, 10 Block) = 100ms: watch for 15 of them.
	// Each takes one job and holds it until the other has one too.
	var wg, both sync.WaitGroup
	both.Add(2)
	for _, name := range []string{"a", "b"} {
		c := cfg
		c.Consumer = name
		w := newWorker(t, rdb, c, func(context.Context, map[string]string) error { both.Done(); both.Wait(); return nil })
		wg.Go(func() { _ = w.Run(ctx) })
	}
	addJobs(t, rdb, cfg.Stream, 2)
	redistest.Eventually(t, 10*time.Second, "both jobs handled", func() bool {
		n, err := rdb.XLen(ctx, cfg.Stream).Result()
		return err == nil && n == 0
	})
	deadline := time.Now().Add(1500 * time.Millisecond)
	for time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		cs, err := rdb.XInfoConsumers(ctx, cfg.Stream, fanout.DefaultGroup).Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(cs) != 2 {
			t.Fatalf("consumers %+v: a live worker was removed", cs)
		}
	}
	cancel()
	wg.Wait()
}

// TestRunningJobIsNotClaimed: a job that runs ten times MinIdle on a live
// worker is not taken by another worker looking for stale entries; it
// runs once, and a job whose handler then fails is still retried.
func TestRunningJobIsNotClaimed(t *testing.T) {
	rdb, cfg := queue(t)
	cfg.MinIdle, cfg.ClaimEvery, cfg.Block = 60*time.Millisecond, time.Millisecond, 10*time.Millisecond
	var runs atomic.Int64
	started := make(chan struct{}, 4)
	h := func(_ context.Context, job map[string]string) error {
		n := runs.Add(1)
		started <- struct{}{}
		time.Sleep(10 * cfg.MinIdle) // the job's own work, the subject here
		if job["n"] == "0" && n == 1 {
			return errors.New("fails on its first run")
		}
		return nil
	}
	a, b := cfg, cfg
	a.Consumer, b.Consumer = "a", "b"
	wa, wb := newWorker(t, rdb, a, h), newWorker(t, rdb, b, h)
	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	addJobs(t, rdb, cfg.Stream, 1)
	wg.Go(func() { _ = wa.Run(ctx) })
	<-started
	wg.Go(func() { _ = wb.Run(ctx) })
	redistest.Eventually(t, 20*time.Second, "the job done", func() bool {
		return rdb.XLen(context.Background(), cfg.Stream).Val() == 0
	})
	// One failed run, then one retry after MinIdle: two runs, not more.
	if n := runs.Load(); n != 2 {
		t.Fatalf("the job ran %d times, want 2 (one failure, one retry)", n)
	}
	if claimed := wa.Stats().Claimed + wb.Stats().Claimed; claimed != 1 {
		t.Fatalf("%d claims, want 1 (the failed run's retry)", claimed)
	}
}
