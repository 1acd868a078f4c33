package main

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/seed"
	"github.com/socialgw/gateway/internal/social"
)

// modePrefix is the prefix of the modes data sets (+ mode + ":").
const modePrefix = "bench-mode-"

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
		if _, err := r.store.HomePage(ctx, id, social.PageRequest{First: social.DefaultFirst}, readplan.PageWants{}); err != nil {
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
	if _, err := r.store.HomePage(ctx, r.readers[i], social.PageRequest{First: social.DefaultFirst}, readplan.PageWants{}); err != nil {
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
