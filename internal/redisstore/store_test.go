package redisstore_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
)

// TestCheckTopology: REDIS_CLUSTER must match the server — a cluster
// client of a single server and a single-server client of a cluster node
// are stopped at startup with ErrTopology; the right pairing passes.
func TestCheckTopology(t *testing.T) {
	redistest.Addr(t)
	if !redistest.Real() {
		t.Skip("needs a real redis-server (the embedded one has no INFO cluster)")
	}
	ctx := context.Background()
	rdb := redistest.Client(t)
	cluster := redistest.ClusterMode()
	if err := redisstore.CheckTopology(ctx, rdb, cluster); err != nil {
		t.Fatalf("the right pairing: %v", err)
	}
	// The wrong pairing: a plain client of the same (first) node with the
	// flag flipped.
	node := redis.NewClient(&redis.Options{Addr: redistest.Addr(t)})
	defer node.Close()
	if err := redisstore.CheckTopology(ctx, node, !cluster); !errors.Is(err, redisstore.ErrTopology) {
		t.Errorf("single-server client, REDIS_CLUSTER=%v: %v, want ErrTopology", !cluster, err)
	}
	if !cluster {
		cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: []string{redistest.Addr(t)}})
		defer cc.Close()
		if err := redisstore.CheckTopology(ctx, cc, true); !errors.Is(err, redisstore.ErrTopology) {
			t.Errorf("cluster client of a single server: %v, want ErrTopology", err)
		}
	}
}

// The first process records the shared timeline settings; one that
// differs is refused with the settings named, until it reclaims them.
func TestClaimFeed(t *testing.T) {
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	rdb := redistest.Client(t)
	store := func(threshold int) *redisstore.Store {
		s := redisstore.New(rdb, prefix)
		c := redisstore.DefaultFeed()
		c.CelebrityThreshold = threshold
		feedOK(t, s.SetFeed(c))
		return s
	}
	feedOK(t, store(75).ClaimFeed(ctx, false))
	feedOK(t, store(75).ClaimFeed(ctx, false))
	err := store(10000).ClaimFeed(ctx, false)
	if err == nil || !strings.Contains(err.Error(), "CELEBRITY_THRESHOLD is 75 in this deployment, 10000 here") {
		t.Fatalf("mismatch: %v", err)
	}
	feedOK(t, store(10000).ClaimFeed(ctx, true))
	if err := store(75).ClaimFeed(ctx, false); err == nil {
		t.Fatal("the old value is accepted after a reclaim")
	}
}
