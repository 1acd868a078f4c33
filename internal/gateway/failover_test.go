package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redistest"
)

// TestClusterFailover kills the master holding a user's slot under a
// gateway wired as in production (redisstore.Connect's cluster client,
// gateway.New), and checks that once the replica has taken over the same
// gateway serves that user again — reads and writes, with the data
// written before the kill — without a restart. It logs how long the user
// could not be served. It runs in the cluster pass of CI
// (REDIS_CLUSTER_TESTS=1), on a cluster of its own: killing a master of
// the shared one would disturb the other tests.
func TestClusterFailover(t *testing.T) {
	c, rdb := redistest.OwnCluster(t)
	s := gatewaytest.New(t, gatewaytest.Options{Redis: rdb})
	ctx := context.Background()

	u := s.Register(t, "failover")
	const post = `mutation($i: CreatePostInput!) { createPost(input: $i) { id } }`
	s.MustDo(t, u.Token, post, map[string]any{"i": map[string]any{"content": "before"}})
	posts := s.Store.Keys().UserPosts(u.ID)
	master, err := c.Master(posts)
	if err != nil {
		t.Fatal(err)
	}
	// Replication is asynchronous: let the replica catch up first, so the
	// test is about the gateway, not about writes a failover may lose.
	direct := redis.NewClient(&redis.Options{Addr: master.Addr})
	if n, err := direct.Do(ctx, "WAIT", 1, 2000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT for the replica: %d, %v", n, err)
	}
	direct.Close()

	killed := time.Now()
	master.Stop()
	var codes []string
	for {
		r := s.Do(t, u.Token, post, map[string]any{"i": map[string]any{"content": "after"}})
		if len(r.Errors) == 0 {
			break
		}
		if len(codes) == 0 || codes[len(codes)-1] != r.Code() {
			codes = append(codes, r.Code())
		}
		if time.Since(killed) > 30*time.Second {
			t.Fatalf("not served 30 s after the master was killed; error codes %v", codes)
		}
		time.Sleep(50 * time.Millisecond)
	}
	down := time.Since(killed)
	t.Logf("failover: the user's slot served again %s after its master was killed (cluster-node-timeout 1 s); error codes meanwhile %v", down.Round(time.Millisecond), codes)

	me := s.MustDo(t, u.Token, `{ me { id } }`, nil)
	if me.Str("me.id") != u.ID {
		t.Errorf("me after the failover: %+v", me.Data)
	}
	if n, err := rdb.ZCard(ctx, posts).Result(); err != nil || n != 2 {
		t.Errorf("%d posts after the failover, %v: want the one from before and the one after", n, err)
	}
	if err := c.WaitOK(30 * time.Second); err != nil {
		t.Errorf("cluster after the failover: %v", err)
	}
}
