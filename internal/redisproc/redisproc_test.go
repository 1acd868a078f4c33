package redisproc_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisproc"
	"github.com/socialgw/gateway/internal/redistest"
)

func TestStartStop(t *testing.T) {
	s, err := redisproc.Start("--maxmemory", "64mb")
	if errors.Is(err, redisproc.ErrNotFound) {
		t.Skip("redis-server not on PATH")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if strings.HasSuffix(s.Addr, ":6379") || !strings.HasPrefix(s.Addr, "127.0.0.1:") {
		t.Fatalf("address %s: want a loopback port other than 6379", s.Addr)
	}
	opt, err := redis.ParseURL(s.URL())
	if err != nil {
		t.Fatal(err)
	}
	opt.MaxRetries = -1
	c := redis.NewClient(opt)
	defer c.Close()
	ctx := context.Background()
	cfg, err := c.ConfigGet(ctx, "save").Result()
	if err != nil {
		t.Fatal(err)
	}
	if cfg["save"] != "" {
		t.Errorf("save = %q, want nothing saved", cfg["save"])
	}
	if mm := c.ConfigGet(ctx, "maxmemory").Val()["maxmemory"]; mm != "67108864" {
		t.Errorf("maxmemory = %q: extra arguments not passed", mm)
	}
	s.Stop()
	s.Stop() // idempotent
	if err := c.Ping(ctx).Err(); err == nil {
		t.Error("server still answers after Stop")
	}
	if redisproc.Version() == "" {
		t.Error("no version")
	}
}

func TestCluster(t *testing.T) {
	redistest.Slow(t, "starts a Redis Cluster of six servers")
	c, err := redisproc.StartCluster(3, 1)
	if errors.Is(err, redisproc.ErrNotFound) {
		t.Skip("redis-server or redis-cli not on PATH")
	}
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if len(c.Nodes) != 6 {
		t.Fatalf("%d nodes, want 6", len(c.Nodes))
	}
	opt, err := redis.ParseClusterURL(c.URL())
	if err != nil {
		t.Fatal(err)
	}
	cc := redis.NewClusterClient(opt)
	defer cc.Close()
	ctx := context.Background()
	if err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error {
		return m.Ping(ctx).Err()
	}); err != nil {
		t.Fatal(err)
	}
	// Keys in every slot are served; the three masters share the slots.
	for i := 0; i < 100; i++ {
		if err := cc.Set(ctx, fmt.Sprint("k", i), i, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	slots, err := cc.ClusterSlots(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	owners := map[string]bool{}
	for _, s := range slots {
		owners[s.Nodes[0].Addr] = true
		if len(s.Nodes) != 2 {
			t.Errorf("slots %d-%d: %d nodes, want a master and a replica", s.Start, s.End, len(s.Nodes))
		}
	}
	if len(owners) != 3 {
		t.Errorf("%d masters own slots, want 3", len(owners))
	}
	c.Stop()
	c.Stop()
}
