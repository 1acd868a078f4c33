// Command bench measures the read and write paths of the gateway on a
// realistic data set, side by side in one run, and writes a markdown
// report (docs/performance.md explains it and shows a run).
//
// It seeds the data set through the store's own write APIs
// (internal/seed: power-law followers, activity, likes and comments), or
// reuses one seeded before (--reuse), then measures:
//
//   - the reference query (graph/reference.graphql:
//     a 20-post home page with authors, counters, viewerHasLiked, three
//     comments with their authors and reposted originals) four ways:
//     (a) the gateway over HTTP on a loopback listener, (b) the same page
//     fetched by the store directly, without GraphQL, and two baselines
//     without the gateway: (c) its own Redis flights for
//     each page, recorded once, replayed by a raw RESP client (Redis
//     alone), and (d) the same replayed through go-redis; each
//     at concurrency 1 and at saturation (--concurrency), rotating among
//     many readers with non-empty home timelines: pages/s, p50 and p99
//     latency, Redis round trips and commands per page (a go-redis hook),
//     allocations and bytes per page (runtime.MemStats deltas, which
//     include the in-process load generator);
//   - Redis bytes per home-timeline entry at the cap, and per user, post,
//     follow, like and comment (MEMORY USAGE);
//   - the fan-out of one post to --fanout-followers followers (celebrity
//     threshold raised above that), timed as the worker's work, against a
//     raw pipelined write of the same entries in pipelines of 1 000 (LPUSH,
//     the command delivery ends in, and ZADD for reference);
//   - createPost latency with 0 and with --fanout-followers followers;
//   - push, pull and hybrid fan-out on one smaller data set seeded three
//     times with the same seed: Redis commands and time per createPost
//     (with its fan-out), per home-timeline page, and home-timeline memory;
//   - the read path's Redis round trips and commands, counted rather than
//     timed: lists nested under a timeline page at several page sizes, and
//     a home page of readers following one or many pulled authors.
//
// Without --redis-url it starts a throwaway redis-server from PATH on a
// free loopback port (internal/redisproc), which is gone when bench exits.
// With --redis-url it writes under --prefix and the bench-…: prefixes, and
// deletes what it finds there first: point it at a Redis of its own.
//
// Usage:
//
//	go run ./cmd/bench --out docs/performance-results.md
//	go run ./cmd/bench --users 500 --posts 5000 --duration 2s --fanout-followers 5000 \
//	    --modes-users 500 --modes-posts 5000   # a quick look
//	go run ./cmd/bench --redis-url redis://127.0.0.1:7000 --reuse
//
// A full run (10 000 users, 100 000 posts) takes about five and a half
// minutes on two cores; docs/performance-results.md records how long the
// last one took.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/socialgw/gateway/cmd/internal/app"
)

func main() {
	app.Main("bench", false, func(ctx context.Context, _ []string) error { return run(ctx, os.Args, os.Stdout, os.Stderr) })
}

// Config is what a run measures and on what.
type Config struct {
	RedisURL    string
	Cluster     bool // start (or, with RedisURL, use) a Redis Cluster
	Shards      int  // fan-out queue shards
	Prefix      string
	Users       int
	Posts       int
	Seed        uint64
	Reuse       bool
	Duration    time.Duration
	Rounds      int
	Concurrency int
	Readers     int
	Out         string
	Parts       map[string]bool

	FanoutFollowers int
	FanoutRuns      int
	CreatePosts     int

	ModesUsers, ModesPosts  int
	ModesWrites, ModesReads int
	ModesCelebrityThreshold int
	SeedConcurrency         int
	PulledAuthors           int
	commandLine             string
}

// parts a run may be limited to.
var allParts = []string{"read", "cap", "fanout", "modes", "costs"}

func parseConfig(args []string, stderr io.Writer) (*Config, error) {
	c := &Config{}
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.RedisURL, "redis-url", "", "Redis to use (default: a throwaway redis-server started from PATH)")
	fs.BoolVar(&c.Cluster, "cluster", false, "run on Redis Cluster: a throwaway local cluster of three masters with a replica each, or with --redis-url a cluster in go-redis's URL form")
	fs.IntVar(&c.Shards, "fanout-shards", 1, "streams the fan-out queue is sharded over")
	fs.StringVar(&c.Prefix, "prefix", "bench:", "key prefix of the main data set")
	fs.IntVar(&c.Users, "users", 10000, "users of the main data set")
	fs.IntVar(&c.Posts, "posts", 100000, "posts of the main data set")
	fs.Uint64Var(&c.Seed, "seed", 1, "seed of the data sets")
	fs.BoolVar(&c.Reuse, "reuse", false, "reuse the main data set seeded by an earlier run with the same --users, --posts and --seed (needs --redis-url)")
	fs.DurationVar(&c.Duration, "duration", 10*time.Second, "duration of each read measurement (after a warm-up of a fifth of it, at most 2s)")
	fs.IntVar(&c.Rounds, "rounds", 5, "slices each read measurement is cut into, the paths taking turns")
	fs.IntVar(&c.Concurrency, "concurrency", 32, "requests in flight at saturation")
	fs.IntVar(&c.Readers, "readers", 1000, "readers the read measurements rotate among")
	fs.StringVar(&c.Out, "out", "", "also write the markdown report to this file")
	parts := fs.String("parts", strings.Join(allParts, ","), "what to measure: read, cap, fanout, modes, costs")
	fs.IntVar(&c.FanoutFollowers, "fanout-followers", 100000, "followers of the fan-out measurement's author")
	fs.IntVar(&c.FanoutRuns, "fanout-runs", 5, "fan-outs and raw writes timed (the median is reported)")
	fs.IntVar(&c.CreatePosts, "create-posts", 50, "createPost calls timed per author")
	fs.IntVar(&c.ModesUsers, "modes-users", 2000, "users of the fan-out modes data set")
	fs.IntVar(&c.ModesPosts, "modes-posts", 20000, "posts of the fan-out modes data set")
	fs.IntVar(&c.ModesWrites, "modes-writes", 500, "createPost calls measured per fan-out mode")
	fs.IntVar(&c.ModesReads, "modes-reads", 500, "home-timeline pages measured per fan-out mode (one per reader)")
	fs.IntVar(&c.ModesCelebrityThreshold, "modes-celebrity-threshold", 0, "hybrid's celebrity threshold in the modes comparison (0: a tenth of --modes-users)")
	fs.IntVar(&c.SeedConcurrency, "seed-concurrency", 16, "store calls in flight while seeding")
	fs.IntVar(&c.PulledAuthors, "pulled-authors", 200, "pulled authors the costs part's reader follows (against 1)")
	if err := fs.Parse(args[1:]); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	c.Parts = map[string]bool{}
	for _, p := range strings.Split(*parts, ",") {
		p = strings.TrimSpace(p)
		if !slices.Contains(allParts, p) {
			return nil, fmt.Errorf("--parts: unknown part %q (want %s)", p, strings.Join(allParts, ", "))
		}
		c.Parts[p] = true
	}
	switch {
	case c.Users < 10 || c.Posts < 10:
		return nil, errors.New("--users and --posts must be at least 10")
	case c.Duration <= 0 || c.Rounds < 1 || c.Concurrency < 1 || c.Readers < 1:
		return nil, errors.New("--duration, --rounds, --concurrency and --readers must be positive")
	case c.Reuse && c.RedisURL == "":
		return nil, errors.New("--reuse needs --redis-url: a throwaway server starts empty")
	case c.FanoutFollowers < 1 || c.FanoutRuns < 1 || c.CreatePosts < 1:
		return nil, errors.New("--fanout-followers, --fanout-runs and --create-posts must be positive")
	case c.PulledAuthors < 7:
		return nil, errors.New("--pulled-authors must be at least 7 (3 posts each fill a 20-post page)")
	case c.ModesUsers < 10 || c.ModesPosts < 10 || c.ModesWrites < 1 || c.ModesReads < 1:
		return nil, errors.New("--modes-users and --modes-posts must be at least 10, --modes-writes and --modes-reads positive")
	case strings.HasPrefix(c.Prefix, "bench-"):
		return nil, errors.New("--prefix: bench-… prefixes are the measurements' own")
	}
	if c.ModesCelebrityThreshold <= 0 {
		c.ModesCelebrityThreshold = max(1, c.ModesUsers/10)
	}
	c.commandLine = commandLine(args)
	return c, nil
}

// commandLine quotes args as a shell would need them, the program by its
// base name (go run builds it in a temporary directory).
func commandLine(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		if i == 0 {
			a = filepath.Base(a)
		}
		if a == "" || strings.ContainsAny(a, " \t\"'$\\*?;&|<>()") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

// run parses the flags, measures and writes the report.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		return err
	}
	logf := func(format string, a ...any) { fmt.Fprintf(stderr, format+"\n", a...) }
	b, err := newBench(ctx, cfg, logf)
	if err != nil {
		return err
	}
	defer b.Close()
	rep, err := b.Run(ctx)
	if err != nil {
		return err
	}
	md := rep.Markdown()
	if cfg.Out != "" {
		if err := os.WriteFile(cfg.Out, []byte(md), 0o644); err != nil {
			return err
		}
		logf("bench: report written to %s", cfg.Out)
	}
	_, err = io.WriteString(stdout, md)
	return err
}
