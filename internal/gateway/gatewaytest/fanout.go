package gatewaytest

import (
	"context"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/fanout"
)

// Fanout is a fan-out worker over a test server's queue that the test
// runs when it wants the queued jobs done (Drain).
type Fanout struct{ w *fanout.Worker }

// NewFanout returns a fan-out worker for s's store.
func NewFanout(tb testing.TB, s *Server) *Fanout {
	tb.Helper()
	w, err := fanout.New(s.Redis, fanout.Config{
		Stream: s.Store.Keys().FanoutStream(), Dead: s.Store.Keys().FanoutDead(), Consumer: "test", MinIdle: time.Minute,
	}, s.Store.HandleFanoutJob, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &Fanout{w: w}
}

// Drain does every queued fan-out job, and fails the test when one fails.
func (f *Fanout) Drain(tb testing.TB) {
	tb.Helper()
	if _, err := f.w.Drain(context.Background()); err != nil {
		tb.Fatal(err)
	}
	if st := f.w.Stats(); st.Failed > 0 {
		tb.Fatalf("fan-out jobs failed: %+v", st)
	}
}
