package redistest

import (
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// Logger returns a logger that writes to tb.Log, so that what a test's
// gateway, store or tracker logs (warnings, internal errors) is shown
// with a failing test and with -v, and not mixed into the output of
// passing ones. Lines logged after the test ended are dropped.
func Logger(tb testing.TB) *slog.Logger {
	w := &testWriter{tb: tb}
	tb.Cleanup(w.close) // registered first: runs after the later clean-ups
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// testWriter writes lines to tb.Log until the test ends.
type testWriter struct {
	mu   sync.Mutex
	tb   testing.TB
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.tb.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

func (w *testWriter) close() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}
