package gatewaytest

import (
	"context"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/export"
	"github.com/socialgw/gateway/internal/fanout"
)

// Exports is a worker of a test server's data export queue (the server
// needs Options.Media with Files); the test runs it when it wants the
// queued exports prepared (Drain).
type Exports struct{ w *fanout.Worker }

// NewExports returns an export worker for s.
func NewExports(tb testing.TB, s *Server) *Exports {
	tb.Helper()
	if s.Exports == nil {
		tb.Fatal("gatewaytest: exports need Options.Media with Files")
	}
	h := &export.Worker{Source: s.Exports, Records: s.Exports, Files: s.cfg.Media.Files, Log: Logger(tb)}
	stream, dead, alive := s.Exports.ExportQueue()
	w, err := fanout.New(s.Redis, fanout.Config{Stream: stream, Dead: dead, Alive: alive, Group: "export",
		Consumer: "test", MinIdle: time.Minute}, h.Handle, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &Exports{w: w}
}

// Drain prepares every queued export, and fails the test when one fails.
func (e *Exports) Drain(tb testing.TB) {
	tb.Helper()
	if _, err := e.w.Drain(context.Background()); err != nil {
		tb.Fatal(err)
	}
	if st := e.w.Stats(); st.Failed > 0 {
		tb.Fatalf("export jobs failed: %+v", st)
	}
}
