package main

import (
	"bufio"
	"bytes"
	"context"
	"math"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/seed"
)

// TestMain closes the small data set's gateway (smallEnv) before the
// package's Redis stops, so its profile cache does not log the Redis it
// tracks going away.
func TestMain(m *testing.M) {
	redistest.MainThen(m, func() {
		if smallEnvMade.Load() {
			if env, err := smallEnv(); err == nil {
				env.b.Close()
			}
		}
	})
}

// smallEnvMade says whether smallEnv ran.
var smallEnvMade atomic.Bool

// TestRunTiny runs the whole command on a tiny data set with short
// measurements and checks the report.
func TestRunTiny(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds and measures for several seconds")
	}
	url := redistest.URL(t)
	if !redistest.Real() {
		t.Skip("needs a real redis-server (MEMORY USAGE, OBJECT ENCODING)")
	}
	out := t.TempDir() + "/results.md"
	prefix := redistest.Prefix(t)
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), []string{"bench",
		"--redis-url", url, "--cluster=" + strconv.FormatBool(redistest.ClusterMode()), "--prefix", prefix,
		"--users", "80", "--posts", "600", "--duration", "150ms", "--concurrency", "4", "--readers", "10",
		"--fanout-followers", "300", "--fanout-runs", "2", "--create-posts", "5",
		"--modes-users", "60", "--modes-posts", "300", "--modes-writes", "10", "--modes-reads", "10",
		"--pulled-authors", "10",
		"--out", out,
	}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	file, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(file, stdout.Bytes()) {
		t.Error("the report on stdout and in --out differ")
	}
	report := string(file)
	for _, want := range []string{
		"## Machine", "## Targets: throughput, latency, fan-out and memory", "| (a) gateway | 1 |", "| (b) store | 4 |",
		"bytes per home-timeline entry", "| fan-out (worker) |", "| raw LPUSH |", "300 of 300 followers",
		"| push |", "| pull |", "| hybrid |", "--users 80",
		"## Read-path costs", "following 10 pulled authors", "| 100 |",
		"## Targets: against Redis alone, and Redis calls per request", "round trips per page constant for first",
		"| Redis CPU µs/page |",
	} {
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// The replay of the gateway's flights, on a single Redis:
	// a cluster page's flights would need the slot map.
	for _, want := range []string{
		"Redis alone serving the same pages' flights (raw replay)", "otherwise idle cores would allow",
		"| (c) replay | 4 |", "| (d) replay (go-redis) | 4 |", "0 flights overlapped",
	} {
		if redistest.ClusterMode() {
			if strings.Contains(report, want) {
				t.Errorf("report on a cluster has %q", want)
			}
			continue
		}
		if !strings.Contains(report, want) {
			t.Errorf("report lacks %q:\n%s", want, report)
		}
	}
	// Again on the same data set.
	stdout.Reset()
	err = run(context.Background(), []string{"bench",
		"--redis-url", url, "--cluster=" + strconv.FormatBool(redistest.ClusterMode()), "--prefix", prefix,
		"--users", "80", "--posts", "600", "--reuse", "--parts", "cap",
	}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run --reuse: %v\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "reused") {
		t.Errorf("--reuse seeded again:\n%s", stdout.String())
	}
}

func TestFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--reuse"},                // needs --redis-url
		{"--parts", "read,writes"}, // unknown part
		{"--users", "0"},           // too small
		{"--prefix", "bench-fan:"}, // the measurements' own
		{"--concurrency", "0"},     // not positive
		{"--pulled-authors", "3"},  // too few to fill a page
		{"extra"},                  // no arguments
	} {
		if _, err := parseConfig(append([]string{"bench"}, args...), &bytes.Buffer{}); err == nil {
			t.Errorf("%q: no error", args)
		}
	}
	c, err := parseConfig([]string{"bench", "--modes-users", "3000", "--out", "a b.md"}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	if c.ModesCelebrityThreshold != 300 || !c.Parts["modes"] || c.commandLine != "bench --modes-users 3000 --out 'a b.md'" {
		t.Errorf("config %+v", c)
	}
}

// smallEnv is the small data set (seed.Small) with the gateway serving it,
// made once per test binary.
var smallEnv = sync.OnceValues(func() (*benchEnv, error) {
	smallEnvMade.Store(true)
	ctx := context.Background()
	cfg := &Config{Prefix: "small:", Concurrency: 8, Readers: 200, SeedConcurrency: 16}
	sc := seed.Small()
	cfg.Users, cfg.Posts, cfg.Seed = sc.Users, sc.Posts, sc.Seed
	cfg.RedisURL, cfg.Cluster = redisURL, redistest.ClusterMode()
	b, err := newBench(ctx, cfg, func(string, ...any) {})
	if err != nil {
		return nil, err
	}
	if err := b.seedMain(ctx); err != nil {
		return nil, err
	}
	rs, ts, err := b.readTargets(ctx)
	if err != nil {
		return nil, err
	}
	return &benchEnv{b: b, readers: rs, targets: ts}, nil
})

// redisURL is set by the benchmark before smallEnv runs (OnceValues takes
// no testing.TB).
var redisURL string

type benchEnv struct {
	b       *Bench
	readers []reader
	targets []target
}

// BenchmarkReferencePage fetches the reference page of many readers of the
// small data set, one page at a time: (a) the gateway over HTTP, (b) the
// store directly, (c) the gateway's recorded Redis flights replayed raw
// and (d) through go-redis.
//
//	go test -run '^$' -bench ReferencePage ./cmd/bench
func BenchmarkReferencePage(b *testing.B) { benchmarkPages(b, 1) }

// BenchmarkReferencePageSaturation is the same with 32 pages in flight
// (bench's default saturation): the way to profile a path at saturation,
//
//	go test -run '^$' -bench 'ReferencePageSaturation/gateway' -benchtime 15s -cpuprofile cpu.out ./cmd/bench
func BenchmarkReferencePageSaturation(b *testing.B) { benchmarkPages(b, 32) }

// benchmarkPages fetches pages with conc in flight (1: from the benchmark's
// own goroutine).
func benchmarkPages(b *testing.B, conc int) {
	redisURL = redistest.URL(b)
	start := time.Now()
	env, err := smallEnv()
	if err != nil {
		b.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		b.Logf("seeded %d users and %d posts in %s", env.b.data.Stats.Users, env.b.data.Stats.Posts, d.Round(time.Millisecond))
	}
	ctx := context.Background()
	for _, t := range env.targets {
		b.Run(t.name, func(b *testing.B) {
			b.ReportAllocs()
			c0 := env.b.counts()
			var posts, next atomic.Int64
			page := func() bool {
				n, err := t.page(ctx, env.readers[int(next.Add(1)-1)%len(env.readers)])
				if err != nil {
					b.Error(err)
					return false
				}
				posts.Add(int64(n))
				return true
			}
			if conc == 1 {
				for b.Loop() && page() {
				}
			} else {
				b.SetParallelism((conc + runtime.GOMAXPROCS(0) - 1) / runtime.GOMAXPROCS(0))
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() && page() {
					}
				})
			}
			c := env.b.counts().since(c0)
			n := float64(b.N)
			rt, cmds := float64(c.roundTrips)/n, float64(c.commands)/n
			if rc := t.recorded; rc != nil { // the hook does not see the raw replay
				rt, cmds = rc.Flights, rc.Commands
			}
			b.ReportMetric(n/b.Elapsed().Seconds(), "pages/s")
			b.ReportMetric(rt, "roundtrips/page")
			b.ReportMetric(cmds, "commands/page")
			b.ReportMetric(float64(posts.Load())/n, "posts/page")
		})
	}
}

// TestReplay replays recorded reference pages, raw and through go-redis,
// and checks that they bring the gateway's posts and write nothing
// (Redis's count of changes since the last save stays put), which is what
// makes them safe to repeat at saturation.
func TestReplay(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds the small data set")
	}
	redisURL = redistest.URL(t)
	if !redistest.Real() {
		t.Skip("needs a real redis-server")
	}
	if redistest.ClusterMode() {
		t.Skip("no replay on a cluster: a page's flights would need the slot map")
	}
	env, err := smallEnv()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	byName := map[string]target{}
	for _, x := range env.targets {
		byName[x.name] = x
	}
	raw, viaGoRedis := byName["replay"], byName["replay-go-redis"]
	if raw.recorded == nil || viaGoRedis.page == nil {
		t.Fatalf("no replay targets among %d", len(env.targets))
	}
	if rc := raw.recorded; rc.Flights < 2 || rc.Commands < 20 || rc.Overlaps != 0 {
		t.Errorf("recorded %.1f flights and %.1f commands per page, %d overlaps", rc.Flights, rc.Commands, rc.Overlaps)
	}
	dirty := func() string {
		for _, line := range strings.Split(env.b.rdb.Info(ctx, "persistence").Val(), "\n") {
			if v, ok := strings.CutPrefix(line, "rdb_changes_since_last_save:"); ok {
				return strings.TrimSpace(v)
			}
		}
		t.Fatal("no rdb_changes_since_last_save")
		return ""
	}
	for _, r := range env.readers[:5] {
		want, err := byName["gateway"].page(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		before := dirty()
		for _, x := range []target{raw, viaGoRedis, raw} {
			n, err := x.page(ctx, r)
			if err != nil || n != want {
				t.Errorf("%s of %s: %d posts, %v; the gateway's page has %d", x.name, r.id, n, err, want)
			}
		}
		if after := dirty(); after != before {
			t.Errorf("replaying %s's page wrote: %s changes since the last save, then %s", r.id, before, after)
		}
	}
}

func TestSkipReply(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		err      bool
	}{
		{"status", "+OK\r\n", false},
		{"integer", ":42\r\n", false},
		{"bulk", "$5\r\nhello\r\n", false},
		{"null bulk", "$-1\r\n", false},
		{"nested array", "*2\r\n*2\r\n:1\r\n$1\r\nx\r\n_\r\n", false},
		{"map", "%1\r\n+k\r\n*1\r\n,1.5\r\n", false},
		{"attribute", "|1\r\n+a\r\n#t\r\n:7\r\n", false},
		{"error", "-NOSCRIPT no script\r\n", true},
		{"bulk error", "!3\r\nERR\r\n", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := bufio.NewReader(strings.NewReader(tc.in + ":9\r\n"))
			err := skipReply(r)
			if (err != nil) != tc.err {
				t.Fatalf("error %v, want one: %v", err, tc.err)
			}
			if rest, _ := r.ReadString('\n'); !tc.err && rest != ":9\r\n" {
				t.Errorf("left %q, want the next reply", rest)
			}
		})
	}
}

func TestCPUBound(t *testing.T) {
	for _, tc := range []struct {
		name      string
		proc, rds time.Duration
		cores     int
		want      float64
	}{
		{"Redis bound", 100 * time.Microsecond, 500 * time.Microsecond, 2, 2000},
		{"cores bound", 1500 * time.Microsecond, 500 * time.Microsecond, 2, 1000},
		{"not measured", time.Millisecond, 0, 2, 0},
	} {
		got := ReadResult{ProcessCPU: tc.proc, RedisCPU: tc.rds}.CPUBound(tc.cores)
		if math.Abs(got-tc.want) > 1e-6 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
