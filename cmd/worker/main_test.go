package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"gocloud.dev/blob/fileblob"

	"github.com/socialgw/gateway/internal/media/mediatest"
	"github.com/socialgw/gateway/internal/mediastore"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// start runs the worker with the test Redis's variables and vars until
// ctx ends; done has run's result, out its log, which a test may read
// while the worker writes it.
func start(ctx context.Context, t *testing.T, vars map[string]string) (out *redistest.Buffer, done <-chan error) {
	out = &redistest.Buffer{}
	ch := make(chan error, 1)
	go func() { ch <- run(ctx, nil, env(redistest.WithEnv(t, vars)), out) }()
	return out, ch
}

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
		u, err := s.CreateUser(ctx, social.NewAccount{Name: n, Email: n + "@example.com", PasswordHash: "x"})
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
	out, done := start(runCtx, t, map[string]string{"REDIS_PREFIX": prefix, "FANOUT_MODE": "push", "STATS_EVERY": "20ms"})
	var list []string
	t.Cleanup(func() {
		if t.Failed() {
			cancel()
			<-done
			t.Logf("home list %v\n%s", list, out.String())
		}
	})
	redistest.Eventually(t, 10*time.Second, "the post delivered", func() bool {
		list, err = rdb.LRange(ctx, s.Keys().Home(ids[1]), 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		return len(list) == 1 && strings.HasPrefix(list[0], post.ID+":")
	})
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

// TestWorkerSweepsMedia runs the worker on a media directory holding a
// live post's file, a file whose post was never made and a fresh file of
// the same kind, the first two older than the grace: the worker deletes
// the old orphan only.
func TestWorkerSweepsMedia(t *testing.T) {
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	s := redisstore.New(redistest.Client(t), prefix)
	u, err := s.CreateUser(ctx, social.NewAccount{Name: "sweep_author", Email: "sweep@example.com", PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	bucket, err := fileblob.OpenBucket(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	files := mediastore.New(bucket)
	defer files.Close()
	files.Stamp = mediastore.ViewerStamp(s.PostSeqNow)
	save := func(age time.Duration) social.Media {
		jpg := mediatest.JPEGWithGPS(t, 8, 8)
		m, err := files.Save(social.WithViewer(ctx, social.Viewer{UserID: u.ID}), bytes.NewReader(jpg), int64(len(jpg)))
		if err != nil {
			t.Fatal(err)
		}
		then := time.Now().Add(-age)
		if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(m.Key)), then, then); err != nil {
			t.Fatal(err)
		}
		return m
	}
	live, orphan, fresh := save(2*time.Hour), save(2*time.Hour), save(0)
	if _, err := s.CreatePost(ctx, u.ID, social.NewPost{Content: "a picture", Media: []social.Media{live}}); err != nil {
		t.Fatal(err)
	}

	runCtx, cancel := context.WithCancel(ctx)
	out, done := start(runCtx, t, map[string]string{"REDIS_PREFIX": prefix, "MEDIA_DIR": dir, "MEDIA_SWEEP_EVERY": "20ms", "STATS_EVERY": "20ms"})
	exists := func(m social.Media) bool {
		ok, err := files.Exists(ctx, m.Key)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	redistest.Eventually(t, 10*time.Second, "the orphan file swept", func() bool { return !exists(orphan) })
	// Two more passes over the two files left (the stats lines count the
	// files listed): they must leave them.
	listed := func() int {
		var n int
		if m := regexp.MustCompile(`media_listed=(\d+)`).FindAllStringSubmatch(out.String(), -1); len(m) > 0 {
			fmt.Sscan(m[len(m)-1][1], &n)
		}
		return n
	}
	after := listed()
	redistest.Eventually(t, 10*time.Second, "two more sweeps", func() bool { return listed() >= after+4 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if exists(orphan) || !exists(live) || !exists(fresh) {
		t.Fatalf("orphan %v (want gone), live %v, fresh %v (want kept)\n%s", exists(orphan), exists(live), exists(fresh), out)
	}
	if !strings.Contains(out.String(), "media_deleted=1") {
		t.Errorf("the worker's counters do not show the deletion:\n%s", out)
	}

	// A grace an upload could outlast is refused.
	err = run(ctx, nil, env(redistest.WithEnv(t, map[string]string{
		"REDIS_PREFIX": prefix, "MEDIA_DIR": dir, "MEDIA_SWEEP_GRACE": "1m"})), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "MEDIA_SWEEP_GRACE") {
		t.Errorf("run with a 1m grace = %v, want an error naming MEDIA_SWEEP_GRACE", err)
	}
}
