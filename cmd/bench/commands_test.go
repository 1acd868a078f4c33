package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
)

// maxCommandsPerPage bounds what Redis counts (script internals included)
// for one warm reference page of the small data set, and maxSentPerPage
// what the client sends: the page's layout is what keeps them there (a
// third of what the page cost before it read a post's comments and the
// viewer's flags with the post).
//
// maxBytesPerPage bounds the bytes Redis sends for one such page: with
// the post cache, a post's fixed fields are not read again (about 3.7 KB
// a page; 8.2 KB without it).
const (
	maxCommandsPerPage = 97
	maxSentPerPage     = 84
	maxBytesPerPage    = 4500
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
func TestReferencePageCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("seeds the small data set")
	}
	redisURL = redistest.URL(t)
	if !redistest.Real() || redistest.ClusterMode() {
		t.Skip("needs one real redis-server")
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
	ctx := context.Background()
	readers := env.readers[:min(100, len(env.readers))]
	for _, r := range readers { // warm: every reader's page served once
		if _, err := gw.page(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	sent := &sentCounter{byName: map[string]int{}, scripts: map[string]int{}, names: redisstore.ScriptNames()}
	env.b.rdb.AddHook(sent)
	sent.on = true
	before := commandStats(ctx, t, env.b.rdb)
	cpu0, out0 := redisCPU(ctx, env.b.rdb), redisNetOutput(ctx, env.b.rdb)
	for range rounds {
		for _, r := range readers {
			if _, err := gw.page(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	cpu, out := redisCPU(ctx, env.b.rdb)-cpu0, redisNetOutput(ctx, env.b.rdb)-out0
	sent.on = false
	after := commandStats(ctx, t, env.b.rdb)
	n := float64(rounds * len(readers))
	counted := 0
	var rows []string
	for name, c := range after {
		d := c - before[name]
		if name == "info" || d == 0 || strings.HasPrefix(name, "usec:") {
			continue
		}
		counted += d
		us := float64(after["usec:"+name]-before["usec:"+name]) / n
		rows = append(rows, fmt.Sprintf("| %s | %.1f | %.1f | %.0f |", name, float64(sent.byName[name])/n, float64(d)/n, us))
	}
	slices.Sort(rows)
	var b strings.Builder
	fmt.Fprintf(&b, "\n| command | sent per page | counted by Redis per page | µs per page |\n|---|---|---|---|\n%s\n", strings.Join(rows, "\n"))
	fmt.Fprintf(&b, "| **all** | **%.1f** | **%.1f** | |\n\nRedis CPU per page: %.0f µs; bytes Redis sent per page: %.0f; scripts per page:", float64(sent.total)/n, float64(counted)/n, float64(cpu.Microseconds())/n, float64(out)/n)
	for name, c := range sent.scripts {
		fmt.Fprintf(&b, " %s %.1f", name, float64(c)/n)
	}
	t.Log(b.String())
	if per := float64(counted) / n; per > maxCommandsPerPage {
		t.Errorf("Redis counts %.1f commands per reference page; at most %d expected", per, maxCommandsPerPage)
	}
	if per := float64(out) / n; per > maxBytesPerPage {
		t.Errorf("Redis sends %.0f bytes per reference page; at most %d expected", per, maxBytesPerPage)
	}
	if per := float64(sent.total) / n; per > maxSentPerPage {
		t.Errorf("the client sends %.1f commands per reference page; at most %d expected", per, maxSentPerPage)
	}
}

// commandStats reads INFO commandstats: calls by command name.
func commandStats(ctx context.Context, t *testing.T, rdb redis.UniversalClient) map[string]int {
	t.Helper()
	info, err := rdb.Info(ctx, "commandstats").Result()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(info, "\n") {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "cmdstat_")
		if !ok {
			continue
		}
		name, stats, _ := strings.Cut(rest, ":")
		calls, stats, _ := strings.Cut(strings.TrimPrefix(stats, "calls="), ",")
		usec, _, _ := strings.Cut(strings.TrimPrefix(stats, "usec="), ",")
		out[name], _ = strconv.Atoi(calls)
		out["usec:"+name], _ = strconv.Atoi(usec)
	}
	return out
}

// sentCounter is a go-redis hook counting the commands sent, by name, and
// the scripts called by EVALSHA, by file name.
type sentCounter struct {
	mu      sync.Mutex
	on      bool
	total   int
	byName  map[string]int
	scripts map[string]int
	names   map[string]string
}

func (s *sentCounter) count(cmds []redis.Cmder) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.on {
		return
	}
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
