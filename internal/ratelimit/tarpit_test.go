package ratelimit_test

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/socialgw/gateway/internal/ratelimit"
)

// refuse records n refusals of subject, each told to wait.
func refuse(tp *ratelimit.Tarpit, subject string, n int, wait time.Duration) {
	for range n {
		tp.Refused(subject, wait)
	}
}

// held is how long Hold kept a request of subject, and its verdict.
func held(tp *ratelimit.Tarpit, ctx context.Context, subject string) (time.Duration, bool) {
	start := time.Now()
	ok := tp.Hold(ctx, subject)
	return time.Since(start), ok
}

// TestTarpit runs on synctest's clock: the durations are the tarpit's
// own arithmetic, not the machine's speed.
func TestTarpit(t *testing.T) {
	tests := []struct {
		name     string
		refusals int
		wait     time.Duration
		after    time.Duration // between the refusals and the request
		want     time.Duration
	}{
		{"never refused", 0, 0, 0, 0},
		{"within the grace", ratelimit.TarpitGrace - 1, 2 * time.Second, 0, 0},
		{"past the grace: held until the wait ends", ratelimit.TarpitGrace, 2 * time.Second, 500 * time.Millisecond, 1500 * time.Millisecond},
		{"a long wait: held at most MaxHold", ratelimit.TarpitGrace, time.Minute, 0, ratelimit.MaxHold},
		{"came back once the wait was over", ratelimit.TarpitGrace, 2 * time.Second, 2 * time.Second, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tp := ratelimit.NewTarpit()
				refuse(tp, "ip:a", tt.refusals, tt.wait)
				time.Sleep(tt.after)
				if d, ok := held(tp, context.Background(), "ip:a"); d != tt.want || !ok {
					t.Errorf("held %v (%v), want %v", d, ok, tt.want)
				}
				if d, _ := held(tp, context.Background(), "ip:b"); d != 0 {
					t.Errorf("another client held %v", d)
				}
			})
		})
	}
}

// TestTarpitKeepsCounting: a client held until its wait ended and
// refused again at once is held again; one that stayed away past
// TarpitQuiet gets its grace back.
func TestTarpitKeepsCounting(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tp := ratelimit.NewTarpit()
		refuse(tp, "a", ratelimit.TarpitGrace, time.Second)
		if d, _ := held(tp, context.Background(), "a"); d != time.Second {
			t.Fatalf("held %v, want 1s", d)
		}
		refuse(tp, "a", 1, time.Second)
		if d, _ := held(tp, context.Background(), "a"); d != time.Second {
			t.Errorf("refused again straight after its hold: held %v, want 1s", d)
		}
		time.Sleep(time.Second + ratelimit.TarpitQuiet)
		refuse(tp, "a", 1, time.Second)
		if d, _ := held(tp, context.Background(), "a"); d != 0 {
			t.Errorf("after a quiet while: held %v, want 0", d)
		}
	})
}

// TestTarpitBounds: a client has at most TarpitPerClient requests held,
// all clients TarpitHeld; past either Hold answers false at once; a
// request whose client left is let go.
func TestTarpitBounds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tp := ratelimit.NewTarpit()
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		hold := func(subject string) {
			wg.Add(1)
			go func() { defer wg.Done(); tp.Hold(ctx, subject) }()
		}
		refuse(tp, "a", ratelimit.TarpitGrace, time.Minute)
		for range ratelimit.TarpitPerClient {
			hold("a")
		}
		synctest.Wait()
		if d, ok := held(tp, ctx, "a"); d != 0 || ok {
			t.Errorf("one more of the same client: held %v, %v; want 0, false", d, ok)
		}
		for i := 0; tp.Held() < ratelimit.TarpitHeld; i++ {
			s := "c" + strconv.Itoa(i/ratelimit.TarpitPerClient)
			refuse(tp, s, ratelimit.TarpitGrace, time.Minute)
			hold(s)
			synctest.Wait()
		}
		refuse(tp, "z", ratelimit.TarpitGrace, time.Minute)
		if d, ok := held(tp, ctx, "z"); d != 0 || ok {
			t.Errorf("a new client once %d are held: held %v, %v; want 0, false", ratelimit.TarpitHeld, d, ok)
		}
		if d, ok := held(tp, ctx, "fresh"); d != 0 || !ok {
			t.Errorf("a client never refused: held %v, %v; want 0, true", d, ok)
		}
		cancel()
		wg.Wait()
		if n := tp.Held(); n != 0 {
			t.Errorf("%d still held after their clients left", n)
		}
	})
}
