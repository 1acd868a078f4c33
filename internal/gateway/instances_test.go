package gateway_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/mailtest"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
)

func TestMain(m *testing.M) { redistest.MainThen(m, mailtest.Stop) }

// TestTwoGatewaysTwoWorkers runs two gateway instances and two fan-out
// worker pools, each with a Redis client of its own, on one deployment
// (on the package's Redis Cluster in CI's cluster pass): posts created
// through either gateway are fanned out exactly once each, over a queue
// sharded four ways, and the per-user mutation budget is shared by the
// gateways. The instances run in this process; cmd/ tests run processes.
func TestTwoGatewaysTwoWorkers(t *testing.T) {
	const budget = 5
	feed := redisstore.DefaultFeed()
	feed.Mode = redisstore.Push
	feed.FanoutShards = 4
	a := gatewaytest.New(t, gatewaytest.Options{Feed: &feed, Abuse: &gateway.Abuse{
		RateLimits: map[string]ratelimit.Limit{ratelimit.RuleMutationUser: {Count: budget, Per: time.Minute}},
	}})
	b := gatewaytest.Share(t, a)
	ctx := context.Background()

	var mu sync.Mutex
	runs := map[string]int{}
	runCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { stop(); wg.Wait() }()
	for _, name := range []string{"worker-1", "worker-2"} {
		s := redisstore.New(redistest.Client(t), a.Prefix())
		if err := s.SetFeed(feed); err != nil {
			t.Fatal(err)
		}
		handle := func(ctx context.Context, job map[string]string) error {
			if err := s.HandleFanoutJob(ctx, job); err != nil {
				return err
			}
			if job["op"] == "note" {
				return nil // the follows' notifications
			}
			mu.Lock()
			runs[job["post"]]++
			mu.Unlock()
			return nil
		}
		p, err := fanout.NewPool(s.Client(), fanout.Config{Consumer: name, Block: 50 * time.Millisecond}, s.FanoutQueue(), handle, nil)
		if err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { _ = p.Run(runCtx) })
	}

	author := a.Register(t, "author")
	var fans []gatewaytest.User
	for range 3 {
		f := b.Register(t, "fan")
		if err := a.Store.Follow(ctx, f.ID, author.ID); err != nil {
			t.Fatal(err)
		}
		fans = append(fans, f)
	}
	const create = `mutation($i: CreatePostInput!) { createPost(input: $i) { id } }`
	var ids []string
	for i := range budget {
		gw := a
		if i%2 == 1 {
			gw = b
		}
		r := gw.MustDo(t, author.Token, create, map[string]any{"i": map[string]any{"content": "post"}})
		ids = append(ids, r.Str("createPost.id"))
	}
	// The budget is spent across both gateways: the next mutation is
	// refused by either.
	for _, gw := range []*gatewaytest.Server{a, b} {
		if r := gw.Do(t, author.Token, create, map[string]any{"i": map[string]any{"content": "over"}}); r.Code() != "RATE_LIMITED" {
			t.Errorf("mutation %d through a gateway: %+v, want RATE_LIMITED", budget+1, r.Errors)
		}
	}

	redistest.Eventually(t, 10*time.Second, fmt.Sprintf("fan-out jobs of the %d posts", len(ids)), func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(runs) == len(ids)
	})
	mu.Lock()
	defer mu.Unlock()
	for _, id := range ids {
		if runs[id] != 1 {
			t.Errorf("post %s fanned out %d times, want once", id, runs[id])
		}
	}
	for _, f := range fans {
		n, err := a.Store.Client().LLen(ctx, a.Store.Keys().Home(f.ID)).Result()
		if err != nil || n != int64(len(ids)) {
			t.Errorf("fan %s: %d entries in the home list, %v; want %d", f.Name, n, err, len(ids))
		}
	}
}
