package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisproc"
	"github.com/socialgw/gateway/internal/seed"
)

// Machine describes where a run ran.
type Machine struct {
	NProc, GOMAXPROCS int
	CPU, Kernel, Mem  string
	Go, OSArch        string
	Redis             string // redis_version of the server measured
	RedisBinary       string // redis-server --version of the one on PATH
	// LoadBefore and LoadAfter are /proc/loadavg at the start and the end
	// of the run: other processes on the machine add noise.
	LoadBefore, LoadAfter string
}

// loadAvg returns the 1, 5 and 15 minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func machine(ctx context.Context, rdb redis.UniversalClient) Machine {
	m := Machine{
		NProc: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version(),
		OSArch: runtime.GOOS + "/" + runtime.GOARCH, RedisBinary: redisproc.Version(),
		CPU: procField("/proc/cpuinfo", "model name"), Mem: procField("/proc/meminfo", "MemTotal"),
		LoadBefore: loadAvg(),
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	for _, line := range strings.Split(rdb.Info(ctx, "server").Val(), "\n") {
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
			m.Redis = strings.TrimSpace(v)
		}
	}
	return m
}

// procField returns the value of the first "name: value" line of a /proc
// file.
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// Report is everything a run measured.
type Report struct {
	Config  *Config
	Machine Machine
	Data    *seed.Data
	Reused  bool
	HomeCap int
	Reads   *Reads
	Entry   *EntryBytes
	Fanout  *Fanout
	Modes   *Modes
	Costs   *Costs
	// Entities is memory per user, post, follow, like and comment.
	Entities *EntityBytes
	Elapsed  time.Duration
}

// Target is one target of issue 6 and whether the run met it.
type Target struct {
	Name, Measured string
	Met            string // "yes", "no", or why it could not be judged
}

// Targets judges the run against the targets of issue 6.
func (r *Report) Targets() []Target {
	var out []Target
	if gw, ok := r.Reads.Get("gateway", r.Config.Concurrency); ok {
		nv, _ := r.Reads.Get("naive", r.Config.Concurrency)
		x := gw.PagesPerSec() / nv.PagesPerSec()
		out = append(out, Target{"gateway throughput at saturation ≥ 4× naive",
			fmt.Sprintf("%.1f× (%.0f vs %.0f pages/s)", x, gw.PagesPerSec(), nv.PagesPerSec()), yes(x >= 4)})
	}
	if gw, ok := r.Reads.Get("gateway", 1); ok {
		st, _ := r.Reads.Get("store", 1)
		x := float64(gw.P50) / float64(st.P50)
		out = append(out, Target{"gateway p50 at concurrency 1 ≤ 3× the direct store fetch",
			fmt.Sprintf("%.1f× (%s vs %s)", x, ms(gw.P50), ms(st.P50)), yes(x <= 3)})
	}
	if f := r.Fanout; f != nil {
		fo, raw := median(f.FanoutTime), median(f.RawLPush)
		x := float64(fo) / float64(raw)
		out = append(out, Target{fmt.Sprintf("fan-out to %d followers ≤ 2× the raw pipelined LPUSH", f.Followers),
			fmt.Sprintf("%.1f× (%s vs %s LPUSH; %s ZADD)", x, ms(fo), ms(raw), ms(median(f.RawZAdd))), yes(x <= 2)})
		q, c := quantile(f.CreateQuiet, .5), quantile(f.CreateCeleb, .5)
		x = float64(c) / float64(q)
		out = append(out, Target{fmt.Sprintf("createPost latency the same with 0 or %d followers (p50 within 25%%)", f.Followers),
			fmt.Sprintf("%.2f× (%s vs %s)", x, ms(c), ms(q)), yes(x <= 1.25 && x >= 0.8)})
	}
	if e := r.Entry; e != nil {
		out = append(out, Target{"≤ 20 bytes per home-timeline entry at the cap",
			fmt.Sprintf("%.1f bytes", e.AtCap), yes(e.AtCap <= 20)})
	}
	return out
}

// replayTarget is issue 15's throughput target: the gateway at saturation
// against Redis alone serving the same pages' flights (the raw replay).
const replayTarget = 0.6

// Targets15 judges the run against the targets of issue 15.
func (r *Report) Targets15() []Target {
	var out []Target
	if gw, ok := r.Reads.Get("gateway", r.Config.Concurrency); ok {
		if rp, ok := r.Reads.Get("replay", r.Config.Concurrency); ok {
			x := gw.PagesPerSec() / rp.PagesPerSec()
			m := fmt.Sprintf("%.2f× (%.0f vs %.0f pages/s)", x, gw.PagesPerSec(), rp.PagesPerSec())
			if bg, br := gw.CPUBound(r.Machine.NProc), rp.CPUBound(r.Machine.NProc); bg > 0 && br > 0 {
				m += fmt.Sprintf("; by CPU per page, %d otherwise idle cores would allow %.2f× (%.0f vs %.0f)", r.Machine.NProc, bg/br, bg, br)
			}
			out = append(out, Target{fmt.Sprintf("gateway pages/s at saturation ≥ %.1f× Redis alone serving the same pages' flights (raw replay)", replayTarget),
				m, yes(x >= replayTarget)})
		}
	}
	if cs := r.Costs; cs != nil {
		out = append(out, costTargets(cs)...)
	}
	// Issue 15's fan-out target is judged with the other fan-out figures,
	// in Targets.
	return out
}

func yes(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

// us is a duration in microseconds.
func us(d time.Duration) float64 { return float64(d) / 1e3 }

// ms formats a duration in milliseconds.
func ms(d time.Duration) string {
	v := float64(d) / 1e6
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f ms", v)
	case v >= 10:
		return fmt.Sprintf("%.1f ms", v)
	}
	return fmt.Sprintf("%.2f ms", v)
}

// Markdown renders the report.
func (r *Report) Markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	c, m := r.Config, r.Machine
	p("# Benchmark results")
	p("")
	p("Generated by `cmd/bench` on %s in %s. Do not edit: run it again (docs/performance.md).", time.Now().UTC().Format("2006-01-02 15:04 UTC"), r.Elapsed.Round(time.Second))
	p("")
	p("Command line: `%s`; to reproduce: `go run ./cmd/bench %s`", c.commandLine, strings.TrimSpace(strings.TrimPrefix(c.commandLine, firstWord(c.commandLine))))
	p("")
	p("## Machine")
	p("")
	p("| | |")
	p("|---|---|")
	p("| CPU | %s |", m.CPU)
	p("| cores (nproc) | %d (GOMAXPROCS %d) |", m.NProc, m.GOMAXPROCS)
	p("| memory | %s |", m.Mem)
	p("| OS | %s, kernel %s |", m.OSArch, m.Kernel)
	p("| Go | %s |", m.Go)
	p("| Redis | %s (on PATH: %s) |", m.Redis, m.RedisBinary)
	p("| load average (1, 5, 15 min) | %s at the start, %s at the end |", m.LoadBefore, m.LoadAfter)
	p("")
	p("Everything runs on this one machine: redis-server, the gateway, and the load generator, which compete for the same cores; a load average above the core count means other processes competed too. The paths compared in one table take turns, so such noise weighs on each alike.")
	p("")
	if r.Data != nil {
		d := r.Data
		st := d.Stats
		p("## Data set")
		p("")
		how := fmt.Sprintf("seeded in %s", st.Total.Round(100*time.Millisecond))
		if r.Reused {
			how = fmt.Sprintf("reused (seeded earlier in %s)", st.Total.Round(100*time.Millisecond))
		}
		p("%d users, %d follows, %d posts (%d reposts, %d ONLY_TO, %d NOT_TO), %d likes, %d comments; seed %d; %s through the store's write APIs with %d calls in flight, fan-out by the worker (`internal/seed`).",
			st.Users, st.Follows, st.Posts, st.Reposts, st.OnlyTo, st.NotTo, st.Likes, st.Comments, d.Config.Seed, how, d.Config.Concurrency)
		p("")
		if !r.Reused {
			var phases []string
			for _, ph := range st.Phases {
				phases = append(phases, fmt.Sprintf("%s %.1fs", ph.Name, ph.Duration.Seconds()))
			}
			p("Seeding phases: %s.", strings.Join(phases, ", "))
			p("")
		}
		maxF, maxFollowing := 0, 0
		for i := range d.Followers {
			maxF, maxFollowing = max(maxF, d.Followers[i]), max(maxFollowing, d.Following[i])
		}
		p("Followers per user: mean %.1f, max %d; following per user: max %d. Home timelines capped at %d entries.",
			float64(st.Follows)/float64(st.Users), maxF, maxFollowing, r.HomeCap)
		p("")
	}
	targetsTable(p, "## Targets of issue 6", r.Targets())
	targetsTable(p, "## Targets of issue 15", r.Targets15())
	if rd := r.Reads; rd != nil {
		p("## Reference page (20 posts, authors, counters, 3 comments, reposts)")
		p("")
		p("Rotating among %d readers with non-empty home timelines; %s per measurement after a warm-up, in %d slices during which the paths take turns. Concurrency %d is saturation. Allocations count the whole process, the load generator included.", rd.Readers, c.Duration, c.Rounds, c.Concurrency)
		p("")
		p("| path | concurrency | pages/s | p50 | p99 | round trips/page | commands/page | allocs/page | KB allocated/page | posts/page | bench CPU µs/page | Redis CPU µs/page |")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, x := range rd.Results {
			redisCPU := "–" // a cluster: several servers
			if x.RedisCPU > 0 {
				redisCPU = fmt.Sprintf("%.0f", us(x.RedisCPU))
			}
			p("| %s | %d | %.0f | %s | %s | %.1f | %.1f | %.0f | %.1f | %.1f | %.0f | %s |", label(x.Target), x.Concurrency, x.PagesPerSec(),
				ms(x.P50), ms(x.P99), x.RoundTrips, x.Commands, x.Allocs, x.Bytes/1024, x.PostsPerPg, us(x.ProcessCPU), redisCPU)
		}
		p("")
		p("CPU per page is the CPU time of the bench process (the path's own side, with the load generator: for (a) and (c) a minimal HTTP/1.1 client, each reader's request built once, responses read by their Content-Length) and of Redis (`INFO cpu`) during the measurement, divided by its pages; other processes on the machine take CPU too, which these do not count. With c cores, a path can serve at most min(1 / Redis CPU, c / (bench CPU + Redis CPU)) pages/s. The bench process runs at GOGC %s.", gcSetting())
		p("")
		p("(a) gateway: the reference query over HTTP (loopback, in-process server, wired by internal/gateway as cmd/gateway wires it); (b) store: `%s` called directly; (c) naive: the same gateway with `graph.Options{Naive: true}`. Round trips include the gateway's token revocation check.", rd.StoreNote)
		p("")
		if rc := rd.Recorded; rc != nil {
			p("(d) replay: Redis alone. The gateway's own Redis traffic for each reader's page, recorded once before the measurements (%d pages, %.1f flights and %.1f commands per page; %d flights overlapped another of their page), sent again flight after flight (a flight is one round trip: one command or one pipeline) by a minimal client: the recorded commands written as RESP in one write per flight, the replies skipped by their framing, no decoding, no GraphQL, no HTTP; %s, as many as go-redis's pool, in the same protocol. (e) replay (go-redis): the same flights through go-redis (`Do` and pipelines), which decodes every reply. The replay's round trips and commands are the recorded ones. Replaying is safe: the flights are reads but for the home script's activity mark, which it writes only when the mark is older than the recorded time by the activity period, so the replay finds it written and writes nothing.",
				rc.Pages, rc.Flights, rc.Commands, rc.Overlaps, rd.ReplayNote)
			p("")
		}
	}
	if e := r.Entry; e != nil {
		p("## Home-timeline memory")
		p("")
		src := fmt.Sprintf("%d of the %d home lists are at the cap", e.Capped, e.Lists)
		if e.Filled {
			src = "no home list was at the cap; one was filled by following the most active authors"
		}
		p("%s. MEMORY USAGE (SAMPLES 0) per entry at the cap: **%.1f bytes** (min %.1f, max %.1f, over up to 200 lists); over all %d entries of all lists: %.1f bytes. Encoding %s, list-max-listpack-size %s. An entry is `<post id>:<author id>`.",
			src, e.AtCap, e.AtCapMin, e.AtCapMax, e.Entries, e.All, e.Encoding, e.ListMaxListpackSize)
		p("")
	}
	if m := r.Entities; m != nil {
		p("## Memory per entity")
		p("")
		p("MEMORY USAGE (SAMPLES 0) of every key holding each kind of thing in the main data set, summed and divided by its count (so each key's own overhead is shared by its members); docs/scaling.md sizes deployments from these.")
		p("")
		p("| | count | bytes each |")
		p("|---|---:|---:|")
		p("| user (profile hash, name and e-mail index fields) | %d | %.0f |", m.Users, m.User)
		p("| post (hash, audience and repost sets, author-timeline entry) | %d | %.0f |", m.Posts, m.Post)
		p("| follow edge (both zset entries) | %d | %.0f |", m.Follows, m.Follow)
		p("| like (likers zset entry) | %d | %.0f |", m.Likes, m.Like)
		p("| comment (hash, list entry, index field) | %d | %.0f |", m.Comments, m.Comment)
		p("")
	}
	if f := r.Fanout; f != nil {
		p("## Fan-out")
		p("")
		p("An author with %d followers (built in %s; every follower active), hybrid mode with the celebrity threshold at %d so the post is pushed. Fan-out is timed as the worker's `Drain` of the one job (read the post, walk the followers %d at a time with `follower_page.lua`, deliver each page with one `deliver_batch.lua` call per master, acknowledge); the raw writes are the same %d entries in pipelines of %d, one after the other. Medians of %d runs, each a fan-out followed by the raw writes, after a first post (below the table) that created every list.",
			f.Followers, f.SetupTime.Round(100*time.Millisecond), f.Threshold, rawBatchSize, f.Followers, rawBatchSize, len(f.FanoutTime))
		p("")
		p("| | median | runs | per entry |")
		p("|---|---:|---|---:|")
		row := func(name string, d []time.Duration) {
			runs := make([]string, len(d))
			for i, x := range d {
				runs[i] = ms(x)
			}
			p("| %s | %s | %s | %.2f µs |", name, ms(median(d)), strings.Join(runs, ", "), float64(median(d))/1e3/float64(f.Followers))
		}
		row("fan-out (worker)", f.FanoutTime)
		row("raw LPUSH", f.RawLPush)
		row("raw ZADD", f.RawZAdd)
		row("raw EVALSHA of a script that only LPUSHes", f.RawScript)
		row("reading the followers alone (ZRANGE by rank, 1 000 a call, as `follower_page.lua` reads them)", f.ScanFollowers)
		p("")
		p("The fan-out delivered the first post to %d of %d followers, in %.0f round trips and %.0f commands per fan-out (the later runs).", f.Delivered, f.Followers, f.FanoutRT, f.FanoutCmds)
		p("")
		p("The first post, to %d lists that did not exist yet (each created, taking its reader's TTL): fan-out %s, raw LPUSH %s (%.1f×).",
			f.Followers, ms(f.FirstFanout), ms(f.FirstRawLPush), float64(f.FirstFanout)/float64(f.FirstRawLPush))
		if len(f.ListenFanout) > 0 {
			fo, raw := median(f.ListenFanout), median(f.ListenRawLPush)
			p("")
			p("With %d of the followers' live channels subscribed on the server (more than a delivery call has recipients, so each call counts its recipients' channels, and %d announcements are published per post): fan-out %s, raw LPUSH %s (%.1f×; medians of %d runs).",
				f.Listening, f.Listening, ms(fo), ms(raw), float64(fo)/float64(raw), len(f.ListenFanout))
		}
		p("")
		p("createPost latency (%d posts per author, alternating, fan-out not running):", len(f.CreateQuiet))
		p("")
		p("| author | p50 | p99 |")
		p("|---|---:|---:|")
		p("| 0 followers | %s | %s |", ms(quantile(f.CreateQuiet, .5)), ms(quantile(f.CreateQuiet, .99)))
		p("| %d followers | %s | %s |", f.Followers, ms(quantile(f.CreateCeleb, .5)), ms(quantile(f.CreateCeleb, .99)))
		p("| 0 followers, while a fan-out to %d runs (%d posts) | %s | %s |", f.Followers, len(f.CreateDuring), ms(quantile(f.CreateDuring, .5)), ms(quantile(f.CreateDuring, .99)))
		p("")
	}
	if md := r.Modes; md != nil {
		p("## Fan-out modes")
		p("")
		p("One data set of %d users, %d follows and %d posts, seeded three times with the same seed, once per mode; half the users read their home timeline before the posts (hybrid skips the others and rebuilds their timeline when they first read). Hybrid's celebrity threshold is %d followers (%d authors above it). Then per mode: %d createPost calls by the plan's authors, each followed by its fan-out (worker `Drain`), and %d first pages of home timelines (`HomePage` with nothing brought along, one per reader, after a warm-up read of each before the posts).",
			md.Users, md.Follows, md.Posts, md.Threshold, md.Celebrities, md.Writes, md.Reads)
		p("")
		p("| mode | createPost + fan-out: mean | p50 | createPost alone p50 | commands/post | round trips/post | page: mean | p50 | commands/page | round trips/page | home lists | entries | home memory | used_memory growth while seeding | seeding time |")
		p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
		for _, x := range md.Results {
			p("| %s | %s | %s | %s | %.0f | %.1f | %s | %s | %.1f | %.1f | %d | %d | %.2f MB | %.1f MB | %.1fs |", x.Mode,
				ms(x.WriteTime), ms(x.WriteP50), ms(x.CreateP50), x.WriteCmds, x.WriteRT, ms(x.ReadTime), ms(x.ReadP50), x.ReadCmds, x.ReadRT,
				x.HomeLists, x.HomeEntries, float64(x.HomeBytes)/1e6, float64(x.UsedBytes)/1e6, x.SeedTime.Seconds())
		}
		p("")
		p("Home memory is MEMORY USAGE of every user's home list after the measured writes and reads. Commands per post include the worker's own (XREADGROUP, XAUTOCLAIM, XACK/XDEL: about 5).")
		p("")
	}
	if cs := r.Costs; cs != nil {
		r.costsMarkdown(p, cs)
	}
	return b.String()
}

// targetsTable renders targets under a heading, if there are any.
func targetsTable(p func(string, ...any), heading string, ts []Target) {
	if len(ts) == 0 {
		return
	}
	p(heading)
	p("")
	p("| target | measured | met |")
	p("|---|---|---|")
	for _, x := range ts {
		p("| %s | %s | %s |", x.Name, x.Measured, x.Met)
	}
	p("")
}

// costsMarkdown renders the read-path costs of issue 15.
func (r *Report) costsMarkdown(p func(string, ...any), cs *Costs) {
	p("## Read-path costs (issue 15)")
	p("")
	p("Redis round trips and commands per request, counted by a go-redis hook (the machine's load does not change them); judged in the targets of issue 15 above.")
	p("")
	p("The reference query with each post's author's `followers(first: 3)` and its `likers(first: 5)` with their `followers(first: 3)`, read by one reader (%s) at several page sizes, through the gateway and its naive mode (token check included):", cs.Reader)
	p("")
	p("| first | posts | round trips | commands | naive round trips | naive commands |")
	p("|---:|---:|---:|---:|---:|---:|")
	for i, f := range nestedFirsts {
		p("| %d | %d | %d | %d | %d | %d |", f, cs.Posts[i], cs.Nested[i].roundTrips, cs.Nested[i].commands, cs.Naive[i].roundTrips, cs.Naive[i].commands)
	}
	p("")
	p("A 20-post home page with what the reference query brings along, for a reader following 1 pulled author (30 posts) and one following many (3 posts each), on data sets of their own (hybrid with the celebrity threshold at 0, so every followed author is pulled; pull mode's first page):")
	p("")
	p("| mode | 1 author: commands | round trips | many: authors | commands | round trips |")
	p("|---|---:|---:|---:|---:|---:|")
	for _, pc := range cs.Pulled {
		p("| %s | %d | %d | %d | %d | %d |", pc.Mode, pc.One.commands, pc.One.roundTrips, pc.ManyAuthors, pc.Many.commands, pc.Many.roundTrips)
	}
	p("")
}

// costTargets judges the costs against the targets of issue 15.
func costTargets(cs *Costs) []Target {
	var out []Target
	if n := len(cs.Nested); n > 1 {
		var rts []string
		for _, c := range cs.Nested {
			rts = append(rts, fmt.Sprint(c.roundTrips))
		}
		// Constant: no page costs more round trips than the one of 5 posts
		// (a one-post page may skip a level, having no likers, say).
		ok := true
		for _, c := range cs.Nested[1:] {
			ok = ok && c.roundTrips <= cs.Nested[1].roundTrips
		}
		out = append(out, Target{fmt.Sprintf("round trips per page constant for first = %s with nested likers and author followers", joinInts(nestedFirsts)),
			strings.Join(rts, ", "), yes(ok)})
	}
	for _, pc := range cs.Pulled {
		limit := 2*pc.One.commands + 2*int64(pc.ManyAuthors)
		out = append(out, Target{fmt.Sprintf("%s: commands of a 20-post page following %d pulled authors ≤ 2× those of 1 + 2 per author", pc.Mode, pc.ManyAuthors),
			fmt.Sprintf("%d vs limit %d (1 author: %d)", pc.Many.commands, limit, pc.One.commands), yes(pc.Many.commands <= limit && pc.OnePosts == 20 && pc.ManyPosts == 20)})
	}
	return out
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

func label(t string) string {
	switch t {
	case "gateway":
		return "(a) gateway"
	case "store":
		return "(b) store"
	case "naive":
		return "(c) naive"
	case "replay":
		return "(d) replay"
	case "replay-go-redis":
		return "(e) replay (go-redis)"
	}
	return t
}

func firstWord(s string) string {
	w, _, _ := strings.Cut(s, " ")
	return w
}

// gcSetting is the GOGC the runtime applies to this process.
func gcSetting() string {
	m := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(m)
	if m[0].Value.Kind() != metrics.KindUint64 {
		return "unknown"
	}
	return strconv.FormatUint(m[0].Value.Uint64(), 10)
}
