// Package redistest starts a throwaway redis-server for tests (through
// internal/redisproc): one per test package, on a free port (never 6379),
// with nothing saved to disk, stopped when the package's tests end and
// killed with the test binary. Without redis-server on PATH it falls back
// to the embedded miniredis and says so, unless REQUIRE_REDIS=1 (set by
// .ci/run), where the missing server fails the tests.
package redistest

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisproc"
)

var (
	once    sync.Once
	addr    string
	stop    func()
	initErr error
	seq     atomic.Int64
)

// Main runs a package's tests and stops the server afterwards. Use it as
// TestMain: func TestMain(m *testing.M) { redistest.Main(m) }.
func Main(m *testing.M) {
	code := m.Run()
	if stop != nil {
		stop()
	}
	os.Exit(code)
}

// Addr returns host:port of the package's Redis server, starting it on
// first use.
func Addr(tb testing.TB) string {
	tb.Helper()
	once.Do(start)
	if initErr != nil {
		tb.Fatalf("redistest: %v", initErr)
	}
	return addr
}

// URL returns a redis:// URL of the package's server.
func URL(tb testing.TB) string { return "redis://" + Addr(tb) }

// Client returns a client of the package's server, closed at test end.
func Client(tb testing.TB) *redis.Client {
	tb.Helper()
	c := redis.NewClient(&redis.Options{Addr: Addr(tb)})
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Prefix returns a key prefix no other test of the package uses, so tests
// share one server without seeing each other's keys and may run in
// parallel.
func Prefix(tb testing.TB) string {
	return "t" + strconv.FormatInt(seq.Add(1), 10) + ":"
}

// Real reports whether the server is a real redis-server.
func Real() bool { return realServer }

var realServer bool

func start() {
	srv, err := redisproc.Start()
	if errors.Is(err, redisproc.ErrNotFound) {
		if os.Getenv("REQUIRE_REDIS") == "1" {
			initErr = fmt.Errorf("redis-server not on PATH and REQUIRE_REDIS=1")
			return
		}
		m, err := miniredis.Run()
		if err != nil {
			initErr = err
			return
		}
		fmt.Fprintln(os.Stderr, "redistest: redis-server not found on PATH; using the embedded miniredis (install redis-server for the real thing)")
		addr, stop = m.Addr(), m.Close
		return
	}
	if err != nil {
		initErr = err
		return
	}
	addr, stop, realServer = srv.Addr, srv.Stop, true
}
