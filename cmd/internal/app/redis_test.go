package app

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redistest"
)

// TestWatchRedisBackoff: while Redis does not answer, watchRedis logs an
// ERROR after 1 s, then waits twice as long each time up to 10 s. The
// schedule is the subject, so the test runs on synctest's clock.
func TestWatchRedisBackoff(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there: every ping is refused at once
	synctest.Test(t, func(t *testing.T) {
		out := &redistest.Buffer{}
		log := slog.New(slog.NewTextHandler(out, nil))
		// go-redis's own lines (a failed dial) go where the process
		// sends them, not to the test's stderr.
		redis.SetLogger(redisLogger{log})
		// One attempt per ping: dial retries would add their own waits.
		rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialerRetries: 1})
		defer rdb.Close()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); watchRedis(ctx, rdb, log, addr) }()

		// Errors are due 1, 3, 7, 15, 25 and 35 s after the start.
		start := time.Now()
		for _, tc := range []struct {
			at   time.Duration
			want int
		}{
			{999 * time.Millisecond, 0}, {1001 * time.Millisecond, 1},
			{2999 * time.Millisecond, 1}, {3001 * time.Millisecond, 2},
			{7001 * time.Millisecond, 3}, {15001 * time.Millisecond, 4},
			{24999 * time.Millisecond, 4}, {25001 * time.Millisecond, 5},
			{35001 * time.Millisecond, 6},
		} {
			time.Sleep(start.Add(tc.at).Sub(time.Now()))
			synctest.Wait()
			if got := strings.Count(out.String(), "level=ERROR msg=\"redis does not answer\""); got != tc.want {
				t.Fatalf("%v after the start: %d ERROR lines, want %d\n%s", tc.at, got, tc.want, out.String())
			}
		}
		cancel()
		<-done
	})
}
