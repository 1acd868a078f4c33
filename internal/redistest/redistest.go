// Package redistest starts a throwaway redis-server for tests (through
// internal/redisproc): one per test package, on a free port (never 6379),
// with nothing saved to disk, stopped when the package's tests end and
// killed with the test binary. Without redis-server on PATH it falls back
// to the embedded miniredis and says so, unless REQUIRE_REDIS=1 (set by
// .ci/run), where the missing server fails the tests.
package redistest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisproc"
	"github.com/socialgw/gateway/internal/redisstore"
)

var (
	once    sync.Once
	addr    string
	stop    func()
	initErr error
	seq     atomic.Int64
	cluster *redisproc.Cluster
)

// ClusterMode reports whether the tests run against a Redis Cluster
// (REDIS_CLUSTER_TESTS=1).
func ClusterMode() bool { return os.Getenv("REDIS_CLUSTER_TESTS") == "1" }

// Main runs a package's tests and stops the server afterwards. Use it as
// TestMain: func TestMain(m *testing.M) { redistest.Main(m) }.
func Main(m *testing.M) { MainThen(m, func() {}) }

// MainThen is Main with a clean-up run after the tests and before the
// package's Redis stops: what the tests left connected to it closes first.
func MainThen(m *testing.M, cleanup func()) {
	code := m.Run()
	cleanup()
	if stop != nil {
		stop()
	}
	os.Exit(code)
}

// Slow skips a test in the fast tier (go test -short): one that starts
// processes, a browser, npm or a cluster, or waits on wall time. The full
// run, the README's command and CI's, runs it.
func Slow(tb testing.TB, why string) {
	tb.Helper()
	if testing.Short() {
		tb.Skip("not in -short: " + why)
	}
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

// URL returns a redis:// URL of the package's server; in cluster mode in
// go-redis's cluster form, which needs REDIS_CLUSTER=true (see Env).
func URL(tb testing.TB) string {
	tb.Helper()
	a := Addr(tb)
	if cluster != nil {
		return cluster.URL()
	}
	return "redis://" + a
}

// Env returns the REDIS_URL and REDIS_CLUSTER settings of a gateway or
// worker process using the package's server.
func Env(tb testing.TB) map[string]string {
	tb.Helper()
	return map[string]string{"REDIS_URL": URL(tb), "REDIS_CLUSTER": strconv.FormatBool(cluster != nil)}
}

// WithEnv adds the package server's REDIS_URL and REDIS_CLUSTER to the
// environment env of a gateway or worker process, and returns it. On a
// cluster, which has one database for every test, it also gives the
// process the test's own key prefix unless env names one: a test's keys
// (and the timeline settings its processes record) stay its own, as the
// database of its own does on one server.
func WithEnv[M ~map[string]string](tb testing.TB, env M) M {
	tb.Helper()
	for k, v := range Env(tb) {
		env[k] = v
	}
	if _, ok := env["REDIS_PREFIX"]; !ok && cluster != nil {
		env["REDIS_PREFIX"] = Prefix(tb)
	}
	return env
}

// Client returns a client of the package's server (a cluster client in
// cluster mode), closed at test end.
func Client(tb testing.TB) redis.UniversalClient {
	tb.Helper()
	a := Addr(tb)
	var c redis.UniversalClient
	if cluster != nil {
		c = cluster.Client()
	} else {
		c = redis.NewClient(&redis.Options{Addr: a})
	}
	tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Cluster returns the package's cluster in cluster mode, else nil; fault
// tests use it to kill a master.
func Cluster(tb testing.TB) *redisproc.Cluster {
	tb.Helper()
	Addr(tb)
	return cluster
}

// Prefix returns a key prefix no other test of the package uses, so tests
// share one server without seeing each other's keys and may run in
// parallel.
func Prefix(tb testing.TB) string {
	return "t" + strconv.FormatInt(seq.Add(1), 10) + ":"
}

// Real reports whether the server is a real redis-server, starting it on
// first use: the answer is known only once it has started.
func Real() bool {
	once.Do(start)
	return realServer
}

var realServer bool

func start() {
	if ClusterMode() {
		c, err := redisproc.StartCluster(3, 1)
		if err != nil {
			initErr = fmt.Errorf("REDIS_CLUSTER_TESTS=1: %w", err)
			return
		}
		cluster, addr, stop, realServer = c, c.Nodes[0].Addr, c.Stop, true
		return
	}
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

// Keys returns the keys matching pattern on every master (a cluster
// client's SCAN or KEYS reaches one node only).
func Keys(tb testing.TB, rdb redis.UniversalClient, pattern string) []string {
	tb.Helper()
	ctx := context.Background()
	var (
		mu   sync.Mutex
		keys []string
	)
	err := redisstore.EachServer(ctx, rdb, func(ctx context.Context, c redis.UniversalClient) error {
		it := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for it.Next(ctx) {
			mu.Lock()
			keys = append(keys, it.Val())
			mu.Unlock()
		}
		return it.Err()
	})
	if err != nil {
		tb.Fatal(err)
	}
	sort.Strings(keys)
	return keys
}

// Master returns a client of the master serving key (rdb itself on a
// single server): commands about a node's state, such as PUBSUB
// SHARDNUMSUB, must go to the node that holds the key or channel.
func Master(tb testing.TB, rdb redis.UniversalClient, key string) redis.UniversalClient {
	tb.Helper()
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return rdb
	}
	m, err := cc.MasterForKey(context.Background(), key)
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

// MasterAddrs returns the addresses of the masters of a cluster client,
// or the one server's. (ForEachMaster calls its function on every master
// at once.)
func MasterAddrs(tb testing.TB, rdb redis.UniversalClient) []string {
	tb.Helper()
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return []string{rdb.(*redis.Client).Options().Addr}
	}
	var mu sync.Mutex
	var addrs []string
	err := cc.ForEachMaster(context.Background(), func(_ context.Context, m *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		addrs = append(addrs, m.Options().Addr)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return addrs
}

// OwnCluster starts a Redis Cluster of three masters with a replica each
// for one test that kills or stops its nodes (the package's cluster is
// shared with the other tests), and returns it with a client connected as
// the gateway connects (redisstore.Connect); both stop when the test
// ends. It skips the test unless REDIS_CLUSTER_TESTS=1.
func OwnCluster(tb testing.TB) (*redisproc.Cluster, redis.UniversalClient) {
	tb.Helper()
	if !ClusterMode() {
		tb.Skip("needs REDIS_CLUSTER_TESTS=1 (a local Redis Cluster)")
	}
	c, err := redisproc.StartCluster(3, 1)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(c.Stop)
	rdb, err := redisstore.Connect(c.URL(), true)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = rdb.Close() })
	return c, rdb
}
