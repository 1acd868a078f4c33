// Package redistest starts a throwaway redis-server for tests: one per test
// package, on a free port (never 6379), with nothing saved to disk, stopped
// when the package's tests end. Without redis-server on PATH it falls back
// to the embedded miniredis and says so, unless REQUIRE_REDIS=1 (set by
// .ci/run), where the missing server fails the tests.
package redistest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
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
	path, err := exec.LookPath("redis-server")
	if err != nil {
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
	for try := 0; try < 5; try++ {
		if addr, stop, initErr = startServer(path); initErr == nil {
			realServer = true
			return
		}
	}
}

func startServer(path string) (string, func(), error) {
	port, err := freePort()
	if err != nil {
		return "", nil, err
	}
	a := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	dir, err := os.MkdirTemp("", "redistest")
	if err != nil {
		return "", nil, err
	}
	cmd := exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--dir", dir, "--daemonize", "no", "--loglevel", "warning")
	// The server dies with the test binary even when TestMain is skipped
	// or the binary is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return "", nil, fmt.Errorf("start redis-server: %w", err)
	}
	stopFn := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		os.RemoveAll(dir)
	}
	c := redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		err := c.Ping(ctx).Err()
		cancel()
		if err == nil {
			return a, stopFn, nil
		}
		if time.Now().After(deadline) {
			stopFn()
			return "", nil, fmt.Errorf("redis-server on %s did not answer: %w", a, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freePort asks the kernel for a free port, never Redis's standard one.
func freePort() (int, error) {
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, err
		}
		port := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if port != 6379 {
			return port, nil
		}
	}
}
