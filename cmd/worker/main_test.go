package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"net"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestWorkerDeliversAndStops(t *testing.T) {
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	rdb := redistest.Client(t)
	s := redisstore.New(rdb, prefix)
	cfg := redisstore.DefaultFeed()
	cfg.Mode = redisstore.Push
	if err := s.SetFeed(cfg); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range []string{"w_author", "w_reader"} {
		u, err := s.CreateUser(ctx, auth.NewAccount{Name: n, Email: n + "@example.com", PasswordHash: "x"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u.ID)
	}
	if err := s.Follow(ctx, ids[1], ids[0]); err != nil {
		t.Fatal(err)
	}
	post, err := s.CreatePost(ctx, ids[0], social.NewPost{Content: "hi"})
	if err != nil {
		t.Fatal(err)
	}

	runCtx, cancel := context.WithCancel(ctx)
	// slog's handlers serialize their writes; the test reads the log only
	// after run returned.
	out := &bytes.Buffer{}
	done := make(chan error, 1)
	go func() {
		done <- run(runCtx, nil, env(redistest.WithEnv(t, map[string]string{
			"REDIS_PREFIX": prefix, "FANOUT_MODE": "push", "STATS_EVERY": "20ms",
		})), out)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err := rdb.LRange(ctx, s.Keys().Home(ids[1]), 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		if len(list) == 1 && strings.HasPrefix(list[0], post.ID+":") {
			break
		}
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatalf("not delivered: %v\n%s", list, out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not stop")
	}
	if log := out.String(); !strings.Contains(log, "stopped") || !regexp.MustCompile(`processed=[12] `).MatchString(log) { // the post, and maybe already the follow's notification
		t.Fatalf("log:\n%s", log)
	}
}

func TestWorkerConfig(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string // in the error; "" for ErrHelp
	}{
		{"help", nil, []string{"--help"}, ""},
		{"no redis", nil, nil, "REDIS_URL"},
		{"bad mode", map[string]string{"REDIS_URL": "redis://x:1", "FANOUT_MODE": "shove"}, nil, "shove"},
		{"bad cap", map[string]string{"REDIS_URL": "redis://x:1"}, []string{"--home-cap=0"}, "cap"},
		{"bad days", map[string]string{"REDIS_URL": "redis://x:1", "INACTIVE_DAYS": "0"}, nil, "inactive"},
		{"bad idle", map[string]string{"REDIS_URL": "redis://x:1", "FANOUT_MIN_IDLE": "soon"}, nil, "FANOUT_MIN_IDLE"},
		{"bad Redis wait", map[string]string{"REDIS_URL": "redis://x:1", "REDIS_WAIT": "-5s"}, nil, "REDIS_WAIT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseConfig(tt.args, env(tt.env), io.Discard)
			if tt.want == "" {
				if !errors.Is(err, flag.ErrHelp) {
					t.Fatalf("err = %v, want ErrHelp", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want one about %q", err, tt.want)
			}
		})
	}
	c, err := parseConfig(nil, env(map[string]string{"REDIS_URL": "redis://x:1"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Feed.Store.Mode != redisstore.Hybrid || c.Feed.Store.CelebrityThreshold != 10000 || c.Feed.Store.HomeCap != 800 ||
		c.Feed.Store.InactiveAfter != 7*24*time.Hour || c.Feed.Store.Backfill != 200 || c.RedisWait != 30*time.Second {
		t.Fatalf("defaults %+v, REDIS_WAIT %s", c.Feed.Store, c.RedisWait)
	}
}

// TestWorkerRedisWait: a worker whose Redis does not answer within
// REDIS_WAIT stops with an error naming the address, not its password.
func TestWorkerRedisWait(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	err = run(context.Background(), nil, env(map[string]string{"REDIS_URL": "redis://:hunter2@" + addr, "REDIS_WAIT": "500ms"}), io.Discard)
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "REDIS_WAIT") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("run = %v, want an error naming %s and REDIS_WAIT, without the password", err, addr)
	}
}
