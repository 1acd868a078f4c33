package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/seed"
	"github.com/socialgw/gateway/internal/social"
)

// The measurements' own key prefixes, cleared before use.
const (
	fanPrefix    = "bench-fan:"
	rawPrefix    = "bench-raw:"
	rawZPrefix   = "bench-rawz:"
	rawSPrefix   = "bench-raws:"
	modePrefix   = "bench-mode-" // + mode + ":"
	rawBatchSize = 1000
)

// homeEntry is a home-list entry as redisstore writes it: "<post>:<author>"
// (internal/redisstore/timeline.go, docs/data-model.md).
func homeEntry(post, author string) string { return post + ":" + author }

// EntryBytes is the memory of home lists.
type EntryBytes struct {
	Lists, Capped int // home lists, and those at the cap
	// AtCap is MEMORY USAGE per entry of the capped lists (mean, min, max
	// over up to 200 of them).
	AtCap, AtCapMin, AtCapMax float64
	// Filled is set when no list was at the cap and one was filled by
	// following the most active authors.
	Filled bool
	// All is MEMORY USAGE per entry over every home list.
	All                 float64
	Entries             int64
	Encoding            string // of a capped list
	ListMaxListpackSize string
}

// measureEntryBytes reads MEMORY USAGE of the main data set's home lists.
func (b *Bench) measureEntryBytes(ctx context.Context) (*EntryBytes, error) {
	k := b.store.Keys()
	limit := b.store.Feed().HomeCap
	homes := make([]string, len(b.data.UserIDs))
	for i, id := range b.data.UserIDs {
		homes[i] = k.Home(id)
	}
	lens, err := b.lengths(ctx, homes)
	if err != nil {
		return nil, err
	}
	out := &EntryBytes{}
	var capped []string
	for i, n := range lens {
		if n > 0 {
			out.Lists++
			out.Entries += n
		}
		if n >= int64(limit) {
			capped = append(capped, homes[i])
		}
	}
	out.Capped = len(capped)
	if len(capped) == 0 {
		key, err := b.fillToCap(ctx)
		if err != nil {
			return nil, err
		}
		capped, out.Filled = []string{key}, true
	}
	capped = capped[:min(200, len(capped))]
	usage, err := b.memoryUsage(ctx, capped)
	if err != nil {
		return nil, err
	}
	clen, err := b.lengths(ctx, capped)
	if err != nil {
		return nil, err
	}
	out.AtCapMin = 1e9
	var sum float64
	for i, u := range usage {
		per := float64(u) / float64(clen[i])
		sum += per
		out.AtCapMin, out.AtCapMax = min(out.AtCapMin, per), max(out.AtCapMax, per)
	}
	out.AtCap = sum / float64(len(usage))
	all, err := b.memoryUsage(ctx, homes)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, u := range all {
		total += u
	}
	if out.Entries > 0 {
		out.All = float64(total) / float64(out.Entries)
	}
	out.Encoding = b.rdb.ObjectEncoding(ctx, capped[0]).Val()
	if v, err := b.rdb.ConfigGet(ctx, "list-max-listpack-size").Result(); err == nil {
		out.ListMaxListpackSize = v["list-max-listpack-size"]
	}
	b.logf("bench: home lists: %d, %d at the cap; %.1f bytes per entry at the cap, %.1f over all", out.Lists, out.Capped, out.AtCap, out.All)
	return out, nil
}

// fillToCap fills one home list to the cap when the data set has none (a
// small one): a new user follows the most active authors until it is
// full, through Follow, whose backfill copies their recent posts.
func (b *Bench) fillToCap(ctx context.Context) (string, error) {
	k := b.store.Keys()
	id, err := b.store.UserIDByName(ctx, "capfill")
	if social.IsCode(err, social.NotFound) {
		u, cerr := b.authn.Register(ctx, "capfill", "capfill@example.com", "capfill password")
		if cerr != nil {
			return "", cerr
		}
		id, err = u.User.ID, nil
	}
	if err != nil {
		return "", err
	}
	keys := make([]string, len(b.data.UserIDs))
	for i, u := range b.data.UserIDs {
		keys[i] = k.UserPosts(u)
	}
	n, err := pipelineInts(ctx, b.rdb, keys, func(p redis.Pipeliner, key string) *redis.IntCmd { return p.ZCard(ctx, key) })
	if err != nil {
		return "", err
	}
	order := make([]int, len(n))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, c int) int { return int(n[c] - n[a]) })
	limit := int64(b.store.Feed().HomeCap)
	for _, u := range order {
		if l := b.rdb.LLen(ctx, k.Home(id)).Val(); l >= limit {
			break
		}
		if err := b.store.Follow(ctx, id, b.data.UserIDs[u]); err != nil {
			return "", err
		}
	}
	return k.Home(id), nil
}

// lengths returns LLEN of each list (0 for a missing one).
func (b *Bench) lengths(ctx context.Context, keys []string) ([]int64, error) {
	return pipelineInts(ctx, b.rdb, keys, func(p redis.Pipeliner, key string) *redis.IntCmd { return p.LLen(ctx, key) })
}

// memoryUsage returns MEMORY USAGE key SAMPLES 0 of each key (0 for a
// missing one): every element counted, not a sample.
func (b *Bench) memoryUsage(ctx context.Context, keys []string) ([]int64, error) {
	return pipelineInts(ctx, b.rdb, keys, func(p redis.Pipeliner, key string) *redis.IntCmd { return p.MemoryUsage(ctx, key, 0) })
}

// countHeads counts the followers whose home list starts with entry.
func (b *Bench) countHeads(ctx context.Context, store *redisstore.Store, followers []string, entry string) (int64, error) {
	var n int64
	for start := 0; start < len(followers); start += rawBatchSize {
		part := followers[start:min(start+rawBatchSize, len(followers))]
		cmds := make([]*redis.StringCmd, len(part))
		_, err := b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, f := range part {
				cmds[i] = p.LIndex(ctx, store.Keys().Home(f), 0)
			}
			return nil
		})
		if err != nil && err != redis.Nil {
			return 0, err
		}
		for _, c := range cmds {
			if c.Val() == entry {
				n++
			}
		}
	}
	return n, nil
}

// pipelineInts runs one integer command per key, 1 000 per pipeline; a
// missing key reads 0.
func pipelineInts(ctx context.Context, rdb redis.UniversalClient, keys []string, cmd func(redis.Pipeliner, string) *redis.IntCmd) ([]int64, error) {
	out := make([]int64, len(keys))
	for start := 0; start < len(keys); start += rawBatchSize {
		part := keys[start:min(start+rawBatchSize, len(keys))]
		cmds := make([]*redis.IntCmd, len(part))
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, key := range part {
				cmds[i] = cmd(p, key)
			}
			return nil
		})
		if err != nil && err != redis.Nil {
			return nil, err
		}
		for i, c := range cmds {
			if err := c.Err(); err != nil && err != redis.Nil {
				return nil, err
			}
			out[start+i] = c.Val()
		}
	}
	return out, nil
}

// Fanout is the fan-out measurement.
type Fanout struct {
	Followers  int
	SetupTime  time.Duration
	Threshold  int
	FanoutTime []time.Duration // per run, after the first post
	Delivered  int64           // entries found in the followers' lists after the first run
	// FirstFanout and FirstRawLPush are the first post's fan-out and raw
	// writes, to lists that do not exist yet (each is created): not in
	// the runs above, which write to lists that exist, as a post to
	// active readers does.
	FirstFanout, FirstRawLPush time.Duration
	// ListenFanout and ListenRawLPush are runs made while Listening live
	// channels of followers are subscribed on the server (one Redis only):
	// more than a delivery call has recipients, so each call counts its
	// recipients' channels rather than listing the server's.
	Listening                    int
	ListenFanout, ListenRawLPush []time.Duration
	FanoutRT                     float64 // round trips per fan-out
	FanoutCmds                   float64
	RawLPush                     []time.Duration
	RawZAdd                      []time.Duration
	// RawScript is the same entries written by a script that only LPUSHes
	// (EVALSHA per recipient: what calling a script per recipient would
	// cost), ScanFollowers the read of the followers alone, as
	// follower_page.lua reads them (ZRANGE by rank).
	RawScript     []time.Duration
	ScanFollowers []time.Duration
	// createPost latency, sorted
	CreateQuiet, CreateCeleb []time.Duration
	// CreateDuring is createPost by the 0-follower author while a
	// fan-out to every follower runs.
	CreateDuring []time.Duration
}

// measureFanout builds a celebrity with FanoutFollowers followers under its
// own prefix and times delivering to them.
func (b *Bench) measureFanout(ctx context.Context) (*Fanout, error) {
	n := b.cfg.FanoutFollowers
	for _, p := range []string{fanPrefix, rawPrefix, rawZPrefix, rawSPrefix} {
		if err := seed.Clear(ctx, b.rdb, p); err != nil {
			return nil, err
		}
	}
	store := redisstore.New(b.rdb, fanPrefix)
	feed := redisstore.DefaultFeed()
	feed.CelebrityThreshold = 2 * n // pushed, not pulled
	if err := store.SetFeed(feed); err != nil {
		return nil, err
	}
	b.logf("bench: fan-out: building an author with %d followers", n)
	star, err := seed.NewStar(ctx, store, n, b.cfg.SeedConcurrency)
	if err != nil {
		return nil, err
	}
	out := &Fanout{Followers: n, SetupTime: star.Duration, Threshold: feed.CelebrityThreshold}
	b.logf("bench: fan-out: built in %.1fs", star.Duration.Seconds())
	w, err := newWorker(store)
	if err != nil {
		return nil, err
	}
	// Each run: the fan-out of one post, then the raw writes of the same
	// entries in the same pipelines, so that a change in the machine's load
	// weighs on both alike.
	if err := lpushScript.Load(ctx, b.rdb).Err(); err != nil {
		return nil, err
	}
	var total counts
	// Run 0 is the first post, to lists that do not exist yet: reported on
	// its own (FirstFanout), not in the runs compared.
	for run := range b.cfg.FanoutRuns + 1 {
		post, err := store.CreatePost(ctx, star.Celebrity, social.NewPost{Content: "fan-out run " + strconv.Itoa(run)})
		if err != nil {
			return nil, err
		}
		c0 := b.counts()
		t0 := time.Now()
		if err := drain(ctx, w, 1); err != nil {
			return nil, err
		}
		out.FanoutTime = append(out.FanoutTime, time.Since(t0))
		if run > 0 {
			total = total.plus(b.counts().since(c0))
		}
		if run == 0 {
			if out.Delivered, err = b.countHeads(ctx, store, star.Followers, homeEntry(post.ID, star.Celebrity)); err != nil {
				return nil, err
			}
		}
		b.logf("bench: fan-out run %d: %s", run, ms(out.FanoutTime[len(out.FanoutTime)-1]))

		entry := homeEntry(post.ID, star.Celebrity)
		for _, raw := range []struct {
			prefix string
			into   *[]time.Duration
			write  func(p redis.Pipeliner, key string)
		}{
			{rawPrefix, &out.RawLPush, func(p redis.Pipeliner, key string) { p.LPush(ctx, key, entry) }},
			{rawZPrefix, &out.RawZAdd, func(p redis.Pipeliner, key string) {
				p.ZAdd(ctx, key, redis.Z{Score: float64(len(out.RawZAdd)), Member: entry})
			}},
			{rawSPrefix, &out.RawScript, func(p redis.Pipeliner, key string) { lpushScript.EvalSha(ctx, p, []string{key}, entry) }},
		} {
			d, err := b.rawWrites(ctx, raw.prefix, star.Followers, raw.write)
			if err != nil {
				return nil, err
			}
			*raw.into = append(*raw.into, d)
		}
		t0 = time.Now()
		for start := int64(0); ; start += int64(feed.FanoutBatch) {
			page, err := b.rdb.ZRange(ctx, store.Keys().Followers(star.Celebrity), start, start+int64(feed.FanoutBatch)-1).Result()
			if err != nil {
				return nil, err
			}
			if len(page) < feed.FanoutBatch {
				break
			}
		}
		out.ScanFollowers = append(out.ScanFollowers, time.Since(t0))
		if run == 0 {
			out.FirstFanout, out.FirstRawLPush = out.FanoutTime[0], out.RawLPush[0]
			out.FanoutTime, out.RawLPush, out.RawZAdd, out.RawScript, out.ScanFollowers = nil, nil, nil, nil, nil
		}
	}
	if !b.cfg.Cluster {
		if err := b.measureListening(ctx, store, w, star, out); err != nil {
			return nil, err
		}
	}
	out.FanoutRT = float64(total.roundTrips) / float64(b.cfg.FanoutRuns)
	out.FanoutCmds = float64(total.commands) / float64(b.cfg.FanoutRuns)
	b.logf("bench: raw LPUSH %s, ZADD %s, LPUSH script %s; followers read %s (medians)", ms(median(out.RawLPush)),
		ms(median(out.RawZAdd)), ms(median(out.RawScript)), ms(median(out.ScanFollowers)))
	for _, p := range []string{rawPrefix, rawZPrefix, rawSPrefix} {
		if err := seed.Clear(ctx, b.rdb, p); err != nil {
			return nil, err
		}
	}

	// createPost latency, the worker idle: the two authors in turn.
	for i := range b.cfg.CreatePosts {
		for _, a := range []struct {
			id   string
			into *[]time.Duration
		}{{star.Quiet, &out.CreateQuiet}, {star.Celebrity, &out.CreateCeleb}} {
			t0 := time.Now()
			if _, err := store.CreatePost(ctx, a.id, social.NewPost{Content: "latency " + strconv.Itoa(i)}); err != nil {
				return nil, err
			}
			*a.into = append(*a.into, time.Since(t0))
		}
	}
	// Their jobs are not run: discard them (a stream made again by the
	// next worker).
	for _, q := range store.FanoutQueue() {
		if err := b.rdb.Del(ctx, q.Stream).Err(); err != nil {
			return nil, err
		}
	}
	// createPost while a fan-out to every follower runs.
	w, err = newWorker(store)
	if err != nil {
		return nil, err
	}
	if _, err := store.CreatePost(ctx, star.Celebrity, social.NewPost{Content: "under load"}); err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- drain(ctx, w, 1) }()
	var derr error
	for i, running := 0, true; running; i++ {
		select {
		case derr = <-done:
			running = false
			continue
		default:
		}
		t0 := time.Now()
		if _, err := store.CreatePost(ctx, star.Quiet, social.NewPost{Content: "during fan-out " + strconv.Itoa(i)}); err != nil {
			return nil, err
		}
		out.CreateDuring = append(out.CreateDuring, time.Since(t0))
		if i == 10*b.cfg.CreatePosts { // enough: wait for the fan-out
			derr, running = <-done, false
		}
	}
	if derr != nil {
		return nil, derr
	}
	for _, l := range [][]time.Duration{out.CreateQuiet, out.CreateCeleb, out.CreateDuring} {
		slices.Sort(l)
	}
	b.logf("bench: createPost p50: %s with 0 followers, %s with %d, %s during a fan-out",
		ms(quantile(out.CreateQuiet, .5)), ms(quantile(out.CreateCeleb, .5)), n, ms(quantile(out.CreateDuring, .5)))
	return out, seed.Clear(ctx, b.rdb, fanPrefix)
}

// measureListening times fan-outs while live subscribers listen on
// 2 × FanoutBatch of the followers' channels (one SSUBSCRIBE connection
// of this process, drained as it goes), each followed by the raw LPUSHes.
func (b *Bench) measureListening(ctx context.Context, store *redisstore.Store, w *fanout.Pool, star *seed.Star, out *Fanout) error {
	n := min(2*store.Feed().FanoutBatch, len(star.Followers))
	chans := make([]string, n)
	for i, f := range star.Followers[:n] {
		chans[i] = store.Keys().LiveUser(f)
	}
	ps := b.rdb.SSubscribe(ctx, chans...)
	defer ps.Close()
	for range n {
		if _, err := ps.Receive(ctx); err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
	}
	go func() {
		for range ps.Channel() {
		}
	}()
	out.Listening = n
	for run := range min(3, b.cfg.FanoutRuns) {
		post, err := store.CreatePost(ctx, star.Celebrity, social.NewPost{Content: "listened to " + strconv.Itoa(run)})
		if err != nil {
			return err
		}
		t0 := time.Now()
		if err := drain(ctx, w, 1); err != nil {
			return err
		}
		out.ListenFanout = append(out.ListenFanout, time.Since(t0))
		entry := homeEntry(post.ID, star.Celebrity)
		raw, err := b.rawWrites(ctx, rawPrefix, star.Followers, func(p redis.Pipeliner, key string) { p.LPush(ctx, key, entry) })
		if err != nil {
			return err
		}
		out.ListenRawLPush = append(out.ListenRawLPush, raw)
		b.logf("bench: fan-out with %d live channels: %s", n, ms(out.ListenFanout[run]))
	}
	return nil
}

// rawWrites times write on each follower's home key under prefix, in
// pipelines of rawBatchSize one after the other: the baseline a fan-out is
// compared with.
func (b *Bench) rawWrites(ctx context.Context, prefix string, followers []string, write func(p redis.Pipeliner, key string)) (time.Duration, error) {
	keys := redisstore.NewKeys(prefix)
	t0 := time.Now()
	for start := 0; start < len(followers); start += rawBatchSize {
		if _, err := b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, f := range followers[start:min(start+rawBatchSize, len(followers))] {
				write(p, keys.Home(f))
			}
			return nil
		}); err != nil {
			return 0, err
		}
	}
	return time.Since(t0), nil
}

// lpushScript is the least a delivery script can do.
var lpushScript = redis.NewScript(`return redis.call('LPUSH', KEYS[1], ARGV[1])`)

// newWorker returns a fan-out worker of store's queue for Drain.
func newWorker(store *redisstore.Store) (*fanout.Pool, error) {
	return fanout.NewPool(store.Client(), fanout.Config{Consumer: "bench", MinIdle: time.Hour},
		store.FanoutQueue(), store.HandleFanoutJob, nil)
}

// drain runs the worker until it has handled at least want jobs and the
// queue is empty, and fails on a failed job.
func drain(ctx context.Context, w *fanout.Pool, want int) error {
	got := 0
	for {
		n, err := w.Drain(ctx)
		if err != nil {
			return err
		}
		if st := w.Stats(); st.Failed > 0 {
			return fmt.Errorf("fan-out jobs failed: %+v", st)
		}
		got += n
		if n == 0 && got >= want {
			return nil
		}
		if n == 0 {
			return fmt.Errorf("fan-out: %d jobs handled, want %d", got, want)
		}
	}
}

func median(d []time.Duration) time.Duration {
	s := slices.Clone(d)
	slices.Sort(s)
	return quantile(s, .5)
}

// ModeResult is the cost of one fan-out mode.
type ModeResult struct {
	Mode      redisstore.FeedMode
	SeedTime  time.Duration // of the whole modes data set, fan-out included
	SeedCmds  int64
	UsedBytes int64 // used_memory growth while seeding
	// Per createPost, its fan-out included.
	WriteTime, WriteP50, CreateP50 time.Duration
	WriteCmds, WriteRT             float64
	// Per home-timeline page (the first page, HomePage with nothing brought along).
	ReadTime, ReadP50 time.Duration
	ReadCmds, ReadRT  float64
	// Home lists after the writes and reads.
	HomeBytes, HomeEntries, HomeLists int64
}

// Modes is the fan-out modes comparison.
type Modes struct {
	Users, Posts, Follows, Writes, Reads, Threshold int
	Celebrities                                     int
	Results                                         []ModeResult
}

// measureModes seeds the modes data set once per mode, with the same seed,
// then measures the three side by side: writes and reads take turns
// between the modes, so a change in the machine's load weighs on all
// three alike.
func (b *Bench) measureModes(ctx context.Context) (*Modes, error) {
	c := b.cfg
	out := &Modes{Users: c.ModesUsers, Posts: c.ModesPosts, Writes: c.ModesWrites, Reads: c.ModesReads, Threshold: c.ModesCelebrityThreshold}
	sc := seed.Config{Users: c.ModesUsers, Posts: c.ModesPosts, Seed: c.Seed + 1, Concurrency: c.SeedConcurrency,
		ActiveShare: 0.5} // half the users are active: hybrid skips the others
	plan := seed.NewPlan(sc)
	for u := range plan.Users {
		if len(plan.Followers(u)) > out.Threshold {
			out.Celebrities++
		}
	}
	out.Follows = len(plan.Follows)

	var runs []*modeRun
	for _, mode := range []redisstore.FeedMode{redisstore.Push, redisstore.Pull, redisstore.Hybrid} {
		r, err := b.seedMode(ctx, mode, sc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", mode, err)
		}
		runs = append(runs, r)
	}
	// Writes: the authors of the plan's first posts, the same in every
	// mode, each post followed by its fan-out.
	for i := range c.ModesWrites {
		pp := plan.Posts[i%len(plan.Posts)]
		for _, r := range runs {
			if err := r.write(ctx, b, pp); err != nil {
				return nil, fmt.Errorf("%s: %w", r.res.Mode, err)
			}
		}
	}
	// Reads: each reader's first page, after the writes.
	for i := range runs[0].readers {
		for _, r := range runs {
			if err := r.read(ctx, b, i); err != nil {
				return nil, fmt.Errorf("%s: %w", r.res.Mode, err)
			}
		}
	}
	for _, r := range runs {
		if err := r.finish(ctx, b); err != nil {
			return nil, fmt.Errorf("%s: %w", r.res.Mode, err)
		}
		out.Results = append(out.Results, *r.res)
		if err := seed.Clear(ctx, b.rdb, r.prefix); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// modeRun is one mode's data set and measurements.
type modeRun struct {
	prefix  string
	store   *redisstore.Store
	data    *seed.Data
	worker  *fanout.Pool
	readers []string
	res     *ModeResult

	writes, creates, reads []time.Duration
	wc, rc                 counts
}

// seedMode seeds the data set of sc in one mode, under its own prefix, and
// reads the readers' home timelines once (this marks them active, and in
// pull mode sets their pull marks).
func (b *Bench) seedMode(ctx context.Context, mode redisstore.FeedMode, sc seed.Config) (*modeRun, error) {
	r := &modeRun{prefix: modePrefix + string(mode) + ":", res: &ModeResult{Mode: mode}}
	if err := seed.Clear(ctx, b.rdb, r.prefix); err != nil {
		return nil, err
	}
	r.store = redisstore.New(b.rdb, r.prefix)
	feed := redisstore.DefaultFeed()
	feed.Mode = mode
	feed.CelebrityThreshold = b.cfg.ModesCelebrityThreshold
	if err := r.store.SetFeed(feed); err != nil {
		return nil, err
	}
	mem0 := usedMemory(ctx, b.rdb)
	c0 := b.counts()
	d, err := seed.Run(ctx, r.store, sc)
	if err != nil {
		return nil, err
	}
	r.data = d
	r.res.SeedTime, r.res.SeedCmds = d.Stats.Total, b.counts().since(c0).commands
	r.res.UsedBytes = usedMemory(ctx, b.rdb) - mem0
	for _, u := range d.Readers(b.cfg.ModesReads, 1) {
		r.readers = append(r.readers, d.UserIDs[u])
	}
	for _, id := range r.readers {
		if _, err := r.store.HomePage(ctx, id, social.PageRequest{First: social.DefaultFirst}, social.PageWants{}); err != nil {
			return nil, err
		}
	}
	if r.worker, err = newWorker(r.store); err != nil {
		return nil, err
	}
	b.logf("bench: mode %-6s seeded in %.1fs", mode, d.Stats.Total.Seconds())
	return r, nil
}

// write creates one post and runs its fan-out.
func (r *modeRun) write(ctx context.Context, b *Bench, pp seed.PlannedPost) error {
	c0 := b.counts()
	t0 := time.Now()
	if _, err := r.store.CreatePost(ctx, r.data.UserIDs[pp.Author], social.NewPost{Content: pp.Content}); err != nil {
		return err
	}
	r.creates = append(r.creates, time.Since(t0))
	if err := drain(ctx, r.worker, 1); err != nil {
		return err
	}
	r.writes = append(r.writes, time.Since(t0))
	r.wc = r.wc.plus(b.counts().since(c0))
	return nil
}

// read fetches the first page of the i-th reader's home timeline.
func (r *modeRun) read(ctx context.Context, b *Bench, i int) error {
	c0 := b.counts()
	t0 := time.Now()
	if _, err := r.store.HomePage(ctx, r.readers[i], social.PageRequest{First: social.DefaultFirst}, social.PageWants{}); err != nil {
		return err
	}
	r.reads = append(r.reads, time.Since(t0))
	r.rc = r.rc.plus(b.counts().since(c0))
	return nil
}

// finish sums up the measurements and the home lists' memory.
func (r *modeRun) finish(ctx context.Context, b *Bench) error {
	res := r.res
	res.WriteTime, res.WriteP50, res.CreateP50 = mean(r.writes), median(r.writes), median(r.creates)
	res.WriteCmds, res.WriteRT = float64(r.wc.commands)/float64(len(r.writes)), float64(r.wc.roundTrips)/float64(len(r.writes))
	res.ReadTime, res.ReadP50 = mean(r.reads), median(r.reads)
	res.ReadCmds, res.ReadRT = float64(r.rc.commands)/float64(len(r.reads)), float64(r.rc.roundTrips)/float64(len(r.reads))
	homes := make([]string, len(r.data.UserIDs))
	for i, id := range r.data.UserIDs {
		homes[i] = r.store.Keys().Home(id)
	}
	usage, err := b.memoryUsage(ctx, homes)
	if err != nil {
		return err
	}
	lens, err := b.lengths(ctx, homes)
	if err != nil {
		return err
	}
	for i := range homes {
		res.HomeBytes += usage[i]
		res.HomeEntries += lens[i]
		if lens[i] > 0 {
			res.HomeLists++
		}
	}
	b.logf("bench: mode %-6s createPost+fan-out %s (%.0f commands), page %s (%.0f commands), home lists %.1f MB",
		res.Mode, ms(res.WriteTime), res.WriteCmds, ms(res.ReadTime), res.ReadCmds, float64(res.HomeBytes)/1e6)
	return nil
}

func mean(d []time.Duration) time.Duration {
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(max(1, len(d)))
}

// usedMemory is INFO memory's used_memory.
func usedMemory(ctx context.Context, rdb redis.UniversalClient) int64 {
	info := rdb.Info(ctx, "memory").Val()
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}
