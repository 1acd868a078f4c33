package redisproc_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisproc"
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
