package fanout_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// TestShardedQueueTwoWorkers runs two worker processes' pools (each its
// own client and consumer name) over a queue sharded four ways while
// posts are created, and checks that every post's job ran exactly once,
// that every follower got every post, and that both pools took jobs from
// the shards. On Redis Cluster it also checks the shards spread over more
// than one master, which is what lets fan-out grow with the masters.
func TestShardedQueueTwoWorkers(t *testing.T) {
	const shards, posts = 4, 60
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	cfg := redisstore.DefaultFeed()
	cfg.Mode = redisstore.Push
	cfg.FanoutShards = shards
	s := redisstore.New(redistest.Client(t), prefix)
	if err := s.SetFeed(cfg); err != nil {
		t.Fatal(err)
	}
	author := user(t, s, "author")
	var fans []string
	for range 5 {
		f := user(t, s, "fan")
		if err := s.Follow(ctx, f, author); err != nil {
			t.Fatal(err)
		}
		fans = append(fans, f)
	}

	var mu sync.Mutex
	runs := map[string]int{}     // post id → job runs
	byWorker := map[string]int{} // worker → jobs
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for _, name := range []string{"worker-a", "worker-b"} {
		ws := redisstore.New(redistest.Client(t), prefix)
		if err := ws.SetFeed(cfg); err != nil {
			t.Fatal(err)
		}
		handle := func(ctx context.Context, job map[string]string) error {
			if err := ws.HandleFanoutJob(ctx, job); err != nil {
				return err
			}
			if job["op"] == "note" {
				return nil // the follows' notifications
			}
			mu.Lock()
			runs[job["post"]]++
			byWorker[name]++
			mu.Unlock()
			return nil
		}
		p, err := fanout.NewPool(ws.Client(), fanout.Config{Consumer: name, Block: 50 * time.Millisecond}, ws.FanoutQueue(), handle, nil)
		if err != nil {
			t.Fatal(err)
		}
		if p.Shards() != shards {
			t.Fatalf("%d shards, want %d", p.Shards(), shards)
		}
		wg.Go(func() { _ = p.Run(runCtx) })
	}

	var ids []string
	for i := range posts {
		p, err := s.CreatePost(ctx, author, social.NewPost{Content: "post " + strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	redistest.Eventually(t, 10*time.Second, "every job run", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(runs) == posts
	})
	// A job is counted when its handler returns, just before the worker
	// acknowledges it: wait for the acknowledgements too.
	var queued, dead int64
	var err error
	redistest.Eventually(t, 10*time.Second, "every job acknowledged", func() bool {
		queued, dead, err = fanout.BacklogAll(ctx, s.Client(), s.FanoutQueue())
		return err != nil || queued == 0
	})
	stop()
	wg.Wait()
	if err != nil || queued != 0 || dead != 0 {
		t.Errorf("backlog %d, dead letters %d, %v: want an empty queue", queued, dead, err)
	}
	for _, id := range ids {
		if runs[id] != 1 {
			t.Errorf("post %s: job ran %d times, want once", id, runs[id])
		}
	}
	if byWorker["worker-a"] == 0 || byWorker["worker-b"] == 0 {
		t.Errorf("jobs per worker %v: want both to take part", byWorker)
	}
	for _, f := range fans {
		home, err := s.Client().LLen(ctx, s.Keys().Home(f)).Result()
		if err != nil || home != posts {
			t.Errorf("fan %s: %d home entries, %v; want %d", f, home, err, posts)
		}
	}
	// The jobs spread over the shards.
	used := map[string]bool{}
	for _, id := range ids {
		n, _ := strconv.Atoi(id)
		used[s.Keys().FanoutShard(n%shards)] = true
	}
	if len(used) != shards {
		t.Errorf("posts used %d shards, want %d", len(used), shards)
	}

	if cc, ok := s.Client().(*redis.ClusterClient); ok {
		masters := map[string]bool{}
		for _, q := range s.FanoutQueue() {
			slot := cc.ClusterKeySlot(ctx, q.Stream).Val()
			if dslot := cc.ClusterKeySlot(ctx, q.Dead).Val(); dslot != slot {
				t.Errorf("%s and %s in slots %d and %d: want one", q.Stream, q.Dead, slot, dslot)
			}
			m, err := cc.MasterForKey(ctx, q.Stream)
			if err != nil {
				t.Fatal(err)
			}
			masters[m.Options().Addr] = true
		}
		if len(masters) < 2 {
			t.Errorf("%d shards on %d master(s): want them spread", shards, len(masters))
		}
		t.Logf("%d shards on %d masters", shards, len(masters))
	}
}
