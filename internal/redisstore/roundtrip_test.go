package redisstore_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// tripCounter counts round trips: a pipeline is one.
type tripCounter struct{ n atomic.Int64 }

func (c *tripCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *tripCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.n.Add(1); return next(ctx, cmd) }
}
func (c *tripCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error { c.n.Add(1); return next(ctx, cmds) }
}

// trips runs f and returns its round trips.
func (c *tripCounter) trips(tb testing.TB, f func() error) int64 {
	tb.Helper()
	before := c.n.Load()
	if err := f(); err != nil {
		tb.Fatal(err)
	}
	return c.n.Load() - before
}

// tripStore is a store over its own prefix whose client counts round
// trips (cnt), with a worker for its fan-out jobs and n users.
func tripStore(t *testing.T, n int) (s *redisstore.Store, w *fanout.Worker, cnt *tripCounter, users []string) {
	t.Helper()
	rdb := redistest.Client(t)
	cnt = &tripCounter{}
	rdb.AddHook(cnt)
	s = redisstore.New(rdb, redistest.Prefix(t))
	return s, feedWorker(t, s, rdb), cnt, feedUsers(t, s, n)
}

// TestRoundTrips pins the round trips of createPost (the same with 0 and
// with many followers: fan-out is the worker's) and of a home page in each
// mode, as docs/fanout.md states them.
func TestRoundTrips(t *testing.T) {
	tests := []struct {
		mode              redisstore.FeedMode
		celebrity         bool
		page, firstOfPull int64
	}{
		{redisstore.Push, false, 2, 2},
		{redisstore.Hybrid, false, 2, 2},
		{redisstore.Hybrid, true, 3, 3},
		{redisstore.Pull, false, 2, 5},
	}
	for _, tt := range tests {
		name := string(tt.mode)
		if tt.celebrity {
			name += " following a pulled author"
		}
		t.Run(name, func(t *testing.T) {
			cfg := feedConfig(tt.mode)
			cfg.CelebrityThreshold = 30
			rdb := redistest.Client(t)
			cnt := &tripCounter{}
			rdb.AddHook(cnt)
			// On Redis Cluster a round is split by go-redis into one
			// pipeline per master, sent in parallel: count those too.
			perNode := &tripCounter{}
			if cc, ok := rdb.(*redis.ClusterClient); ok {
				cc.OnNewNode(func(c *redis.Client) { c.AddHook(perNode) })
			}
			s := redisstore.New(rdb, redistest.Prefix(t))
			feedOK(t, s.SetFeed(cfg))
			w := feedWorker(t, s, rdb)
			ctx := context.Background()
			u := feedUsers(t, s, 43)
			lonely, popular, reader, fans := u[0], u[1], u[2], u[3:]
			for _, f := range fans {
				feedOK(t, s.Follow(ctx, f, popular))
			}
			feedOK(t, s.Follow(ctx, reader, lonely))
			if tt.celebrity {
				feedOK(t, s.Follow(ctx, reader, popular))
			}
			// Warm the script cache (the first EVALSHA of each script
			// costs a NOSCRIPT and an EVAL).
			feedOK(t, s.LoadScripts(ctx))
			feedPost(t, s, popular, social.NewPost{})
			feedPost(t, s, lonely, social.NewPost{})
			drain(t, w)
			home(t, s, reader, 5)
			feedOK(t, func() error { _, err := homeIDs(ctx, s, reader, social.PageRequest{First: 5}); return err }())

			create := func(author string) func() error {
				return func() error { _, err := s.CreatePost(ctx, author, social.NewPost{Content: "x"}); return err }
			}
			if a, b := cnt.trips(t, create(lonely)), cnt.trips(t, create(popular)); a != 3 || b != 3 {
				t.Errorf("createPost: %d round trips with no follower, %d with %d", a, b, len(fans))
			}
			drain(t, w)
			page := func(after string) func() error {
				return func() error {
					_, err := homeIDs(ctx, s, reader, social.PageRequest{First: 5, After: after})
					return err
				}
			}
			nodes := perNode.n.Load()
			if n := cnt.trips(t, page("")); n != tt.firstOfPull {
				t.Errorf("first home page: %d round trips, want %d", n, tt.firstOfPull)
			}
			checkNodeTrips(t, "first home page", tt.firstOfPull, perNode.n.Load()-nodes)
			nodes = perNode.n.Load()
			if n := cnt.trips(t, page(social.EncodeCursor("999999999"))); n != tt.page {
				t.Errorf("a later home page: %d round trips, want %d", n, tt.page)
			}
			checkNodeTrips(t, "a later home page", tt.page, perNode.n.Load()-nodes)
		})
	}
}

// clusterMasters is the number of masters of redistest's cluster.
const clusterMasters = 3

// checkNodeTrips checks, on Redis Cluster, that a page's rounds reached
// each master at most once per round (go-redis groups a pipeline by node),
// and logs how many node pipelines the page cost.
func checkNodeTrips(t *testing.T, what string, rounds, nodeTrips int64) {
	t.Helper()
	if !redistest.ClusterMode() {
		return
	}
	t.Logf("%s: %d rounds, %d node pipelines over %d masters", what, rounds, nodeTrips, clusterMasters)
	if nodeTrips > rounds*clusterMasters {
		t.Errorf("%s: %d node pipelines in %d rounds: more than one per master per round", what, nodeTrips, rounds)
	}
}
