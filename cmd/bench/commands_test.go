package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// maxCommandsPerPage bounds what Redis counts (script internals included)
// for one warm reference page of the small data set, and maxSentPerPage
// what the client sends: the page's layout is what keeps them there (a
// third of what the page cost before it read a post's comments and the
// viewer's flags with the post). The bounds are about a tenth over what
// is measured below, so that a read added to every post fails.
//
// maxBytesPerPage bounds the bytes Redis sends for one such page: with
// the post cache, a post's fixed fields are not read again (about 3.7 KB
// a page; 8.2 KB without it).
//
// The three hold on a Redis Cluster too: there the page sends the same
// commands, Redis counts the same and sends the same bytes (measured:
// 64.8 sent, 76.3 counted, 4.08 KB on one server; the profile and post
// caches work there as on one server).
//
// maxRoundTripsPerPage bounds the page's round trips (a pipeline is one;
// 3.6 measured in both modes: the token check, home_page.lua, the posts
// with the viewer's flags, and on some pages the reposted originals): a
// read that stops sharing a pipeline adds one to every page.
//
// maxClusterFlightsPerPage bounds, on a cluster, the flights those round
// trips become, one per master a round trip reaches (7.6 measured on
// three masters: the token check's three keys are in three slots, the
// posts of a page on every master): one more round trip a page, even to
// one master, exceeds it.
//
// maxBytesPerPage bounds what Redis sends a page: 4 040 measured with the
// profile, curation and tag fields (each post's and author's new fields
// are read in the same commands and add a few bytes a row).
const (
	maxCommandsPerPage       = 82
	maxSentPerPage           = 70
	maxBytesPerPage          = 4200
	maxRoundTripsPerPage     = 4
	maxClusterFlightsPerPage = 8
	// filterSlackBytes is what 20 filters add to the bytes Redis sends a
	// page (about 800 measured: the HGETALL of the filters, the
	// originals' text).
	filterSlackBytes = 1000
)

// rounds is how many times each reader's page is read while measuring.
const rounds = 20

// TestReferencePageCommands serves warm reference pages through the
// gateway and breaks the Redis commands of a page down by name: those the
// client sent (a hook) and those Redis counted (INFO commandstats deltas,
// script internals included), and the scripts called. The table is the
// one in docs/performance.md ("Commands of the reference page"):
//
//	go test -run ReferencePageCommands -v ./cmd/bench
//
// With REDIS_CLUSTER_TESTS=1 it runs on a local Redis Cluster (three
// masters with a replica each): Redis's figures are summed over the
// masters, and a second hook on each master's connection counts the
// flights a round trip becomes (one per master it reaches).
func TestReferencePageCommands(t *testing.T) { measureReferencePages(t, 0) }

// TestReferencePageCommandsFiltered is TestReferencePageCommands with 20
// keyword filters a reader (in HOME and COMMENTS, matching nothing: what
// reading and applying them costs), removed after: docs/performance.md
// ("Keyword filters").
// The bounds are the same but for filterSlackBytes: the filters ride in
// the home list's round and the reposts' originals' text in the posts'
// check, so the page keeps its round trips.
func TestReferencePageCommandsFiltered(t *testing.T) { measureReferencePages(t, 20) }

func measureReferencePages(t *testing.T, filters int) {
	if testing.Short() {
		t.Skip("seeds the small data set")
	}
	redisURL = redistest.URL(t)
	if !redistest.Real() {
		t.Skip("needs a real redis-server")
	}
	env, err := smallEnv()
	if err != nil {
		t.Fatal(err)
	}
	var gw target
	for _, x := range env.targets {
		if x.name == "gateway" {
			gw = x
		}
	}
	ctx, rdb := context.Background(), env.b.rdb
	readers := env.readers[:min(100, len(env.readers))]
	for _, r := range readers {
		for i := range filters {
			phrase := fmt.Sprint("nomatch", i)
			f, err := env.b.store.AddFilter(ctx, r.id, social.FilterInput{Phrase: phrase, WholeWord: true, Context: social.FilterHome | social.FilterComments})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = env.b.store.RemoveFilter(context.Background(), r.id, f.ID) })
		}
	}
	for _, r := range readers { // warm: every reader's page served once
		if _, err := gw.page(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	sent, flights := newSentCounter(), newSentCounter()
	rdb.AddHook(sent)
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		// A cluster client's hook sees a pipeline whole; each node's
		// client sees the part sent to that node.
		err := cc.ForEachMaster(ctx, func(_ context.Context, c *redis.Client) error { c.AddHook(flights); return nil })
		if err != nil {
			t.Fatal(err)
		}
	}
	// The counters count between the readings of INFO, which are not the
	// page's flights.
	before := commandStats(ctx, t, rdb)
	cpu0, out0, rcpu0 := redisCPU(ctx, rdb), redisNetOutput(ctx, rdb), replicaCPU(ctx, t, rdb)
	sent.start()
	flights.start()
	start := time.Now()
	for range rounds {
		for _, r := range readers {
			if _, err := gw.page(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	elapsed := time.Since(start)
	sent.stop()
	flights.stop()
	cpu, out, rcpu := redisCPU(ctx, rdb)-cpu0, redisNetOutput(ctx, rdb)-out0, replicaCPU(ctx, t, rdb)-rcpu0
	after := commandStats(ctx, t, rdb)
	n := float64(rounds * len(readers))
	table, counted := commandTable(before, after, sent, n)
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nRedis CPU per page: %.0f µs; bytes Redis sent per page: %.0f; round trips per page: %.1f; scripts per page:",
		table, float64(cpu.Microseconds())/n, float64(out)/n, float64(sent.trips)/n)
	for name, c := range sent.scripts {
		fmt.Fprintf(&b, " %s %.1f", name, float64(c)/n)
	}
	if _, ok := rdb.(*redis.ClusterClient); ok {
		// The masters' CPU includes their upkeep (server and cluster bus
		// crons) over the run: an idle second of it, scaled to the run,
		// says how much of the figure it is.
		idle0 := redisCPU(ctx, rdb)
		time.Sleep(time.Second)
		upkeep := float64((redisCPU(ctx, rdb) - idle0).Microseconds()) * elapsed.Seconds() / n
		fmt.Fprintf(&b, "\nflights per page: %.1f (commands in them %.1f); masters' upkeep when idle, over the run: %.0f µs per page; replicas' CPU per page: %.0f µs (not counted above)",
			float64(flights.trips)/n, float64(flights.total)/n, upkeep, float64(rcpu.Microseconds())/n)
	}
	t.Log(b.String())
	cost := pageCost{counted: counted, sent: float64(sent.total) / n, bytes: float64(out) / n,
		trips: float64(sent.trips) / n, flights: float64(flights.trips) / n}
	if filters > 0 {
		// The filters' one HGETALL (about 35 bytes a filter) and the
		// text of reposts' originals, in the page's own round trips.
		cost.bytes -= filterSlackBytes
	}
	checkPage(t, cost)
}

// commandTable renders the commands of a page (of n) between two
// commandstats and returns it with the commands Redis counted per page.
func commandTable(before, after map[string]int, sent *sentCounter, n float64) (string, float64) {
	counted := 0
	var rows, other []string
	for name, c := range after {
		d := c - before[name]
		switch {
		case d == 0 || strings.HasPrefix(name, "usec:"):
		case !pageWork(name):
			other = append(other, fmt.Sprintf("%s %d", name, d))
		default:
			counted += d
			us := float64(after["usec:"+name]-before["usec:"+name]) / n
			rows = append(rows, fmt.Sprintf("| %s | %.1f | %.1f | %.0f |", name, float64(sent.byName[name])/n, float64(d)/n, us))
		}
	}
	slices.Sort(rows)
	slices.Sort(other)
	return fmt.Sprintf("\n| command | sent per page | counted by Redis per page | µs per page |\n|---|---|---|---|\n%s\n| **all** | **%.1f** | **%.1f** | |\n\nnot the page's, in all: %s\n",
		strings.Join(rows, "\n"), float64(sent.total)/n, float64(counted)/n, strings.Join(other, ", ")), float64(counted) / n
}

// pageCost is what a page costs, per page.
type pageCost struct {
	counted, sent, bytes, trips float64
	flights                     float64 // on a cluster
}

// checkPage fails the test when a page costs more than its bounds.
func checkPage(t *testing.T, c pageCost) {
	t.Helper()
	for _, b := range []struct {
		what     string
		per, max float64
	}{
		{"commands Redis counts", c.counted, maxCommandsPerPage},
		{"commands the client sends", c.sent, maxSentPerPage},
		{"bytes Redis sends", c.bytes, maxBytesPerPage},
		{"round trips", c.trips, maxRoundTripsPerPage},
		{"flights to masters", c.flights, maxClusterFlightsPerPage},
	} {
		if b.per > b.max {
			t.Errorf("%s per reference page: %.1f; at most %.0f expected", b.what, b.per, b.max)
		}
	}
}

// pageWork tells whether commands Redis counts under name are the page's:
// not the test's own INFO, nor what keeps a cluster up (a replica's
// REPLCONF ACK every second, go-redis reloading the slot map).
func pageWork(name string) bool {
	return name != "info" && name != "replconf" && !strings.HasPrefix(name, "cluster|") && !strings.HasPrefix(name, "usec:")
}

// commandStats reads INFO commandstats, summed over the masters of a
// cluster: calls by command name, and microseconds under "usec:" + name.
func commandStats(ctx context.Context, t *testing.T, rdb redis.UniversalClient) map[string]int {
	t.Helper()
	out := map[string]int{}
	err := eachInfo(ctx, rdb, "commandstats", func(info string) {
		for line := range strings.SplitSeq(info, "\n") {
			rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_")
			if !ok {
				continue
			}
			name, stats, _ := strings.Cut(rest, ":")
			calls, stats, _ := strings.Cut(strings.TrimPrefix(stats, "calls="), ",")
			usec, _, _ := strings.Cut(strings.TrimPrefix(stats, "usec="), ",")
			c, _ := strconv.Atoi(calls)
			u, _ := strconv.Atoi(usec)
			out[name] += c
			out["usec:"+name] += u
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// replicaCPU is the CPU time the replicas of a cluster have used (0 on
// one server): the test reports it apart, to show it is not page work.
func replicaCPU(ctx context.Context, t *testing.T, rdb redis.UniversalClient) time.Duration {
	t.Helper()
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return 0
	}
	var (
		mu    sync.Mutex // ForEachShard calls on every node at once
		total float64
	)
	err := cc.ForEachShard(ctx, func(ctx context.Context, c *redis.Client) error {
		info, err := c.Info(ctx, "replication", "cpu").Result()
		if err != nil {
			return fmt.Errorf("info: %w", err)
		}
		if strings.Contains(info, "role:slave") {
			mu.Lock()
			defer mu.Unlock()
			total += infoSum(info, "used_cpu_user", "used_cpu_sys")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return time.Duration(total * float64(time.Second))
}

// sentCounter is a go-redis hook counting the round trips and commands
// sent, by name, and the scripts called by EVALSHA, by file name.
type sentCounter struct {
	mu      sync.Mutex
	on      bool
	total   int
	trips   int // a pipeline is one
	byName  map[string]int
	scripts map[string]int
	names   map[string]string
}

func newSentCounter() *sentCounter {
	return &sentCounter{byName: map[string]int{}, scripts: map[string]int{}, names: redisstore.ScriptNames()}
}

func (s *sentCounter) start() { s.mu.Lock(); s.on = true; s.mu.Unlock() }
func (s *sentCounter) stop()  { s.mu.Lock(); s.on = false; s.mu.Unlock() }

func (s *sentCounter) count(cmds []redis.Cmder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.on {
		return
	}
	s.trips++
	for _, c := range cmds {
		name := c.Name()
		s.total++
		s.byName[name]++
		if args := c.Args(); name == "evalsha" && len(args) > 1 {
			sha, _ := args[1].(string)
			s.scripts[s.names[sha]]++
		}
	}
}

func (s *sentCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (s *sentCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		s.count([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

func (s *sentCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		s.count(cmds)
		return next(ctx, cmds)
	}
}
