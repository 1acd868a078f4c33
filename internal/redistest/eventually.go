package redistest

import (
	"testing"
	"time"
)

// Eventually calls f every 10 ms until it reports true and returns how
// long that took; after within it fails the test, naming what it waited
// for. It is the one way tests wait for something another goroutine,
// process or Redis does: the bound only catches a hang, so make it
// generous, and never assert on the duration it returns.
func Eventually(tb testing.TB, within time.Duration, what string, f func() bool) time.Duration {
	tb.Helper()
	start := time.Now()
	for !f() {
		if time.Since(start) > within {
			tb.Fatalf("timed out after %v waiting for %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}
