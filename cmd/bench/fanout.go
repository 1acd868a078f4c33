package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
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
	rawBatchSize = 1000
)

// homeEntry is a home-list entry as redisstore writes it: "<post>:<author>"
// (internal/redisstore/timeline.go, docs/data-model.md).
func homeEntry(post, author string) string { return post + ":" + author }

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
// own prefix and times delivering to them, then createPost beside it.
func (b *Bench) measureFanout(ctx context.Context) (*Fanout, error) {
	n := b.cfg.FanoutFollowers
	if err := clearPrefixes(ctx, b.rdb, fanPrefix, rawPrefix, rawZPrefix, rawSPrefix); err != nil {
		return nil, err
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
	// The follows queued a job each (their notifications): handled here,
	// untimed, so that the first post's fan-out is the post's alone.
	t0 := time.Now()
	if err := drain(ctx, w, 0); err != nil {
		return nil, err
	}
	b.logf("bench: fan-out: the follows' jobs handled in %.1fs", time.Since(t0).Seconds())
	if err := b.timeFanouts(ctx, store, w, star, out); err != nil {
		return nil, err
	}
	if !b.cfg.Cluster {
		if err := b.measureListening(ctx, store, w, star, out); err != nil {
			return nil, err
		}
	}
	b.logf("bench: raw LPUSH %s, ZADD %s, LPUSH script %s; followers read %s (medians)", ms(median(out.RawLPush)),
		ms(median(out.RawZAdd)), ms(median(out.RawScript)), ms(median(out.ScanFollowers)))
	if err := clearPrefixes(ctx, b.rdb, rawPrefix, rawZPrefix, rawSPrefix); err != nil {
		return nil, err
	}

	if err := b.timeCreatePost(ctx, store, star, out); err != nil {
		return nil, err
	}
	if err := b.timeCreatePostDuringFanout(ctx, store, star, out); err != nil {
		return nil, err
	}
	for _, l := range [][]time.Duration{out.CreateQuiet, out.CreateCeleb, out.CreateDuring} {
		slices.Sort(l)
	}
	b.logf("bench: createPost p50: %s with 0 followers, %s with %d, %s during a fan-out",
		ms(quantile(out.CreateQuiet, .5)), ms(quantile(out.CreateCeleb, .5)), n, ms(quantile(out.CreateDuring, .5)))
	return out, seed.Clear(ctx, b.rdb, fanPrefix)
}

// clearPrefixes deletes every key under each prefix.
func clearPrefixes(ctx context.Context, rdb redis.UniversalClient, prefixes ...string) error {
	for _, p := range prefixes {
		if err := seed.Clear(ctx, rdb, p); err != nil {
			return err
		}
	}
	return nil
}

// timeFanouts times FanoutRuns + 1 runs, each the fan-out of one post and
// then the raw writes of the same entries in the same pipelines, so that a
// change in the machine's load weighs on both alike. Run 0 is the first
// post, to lists that do not exist yet: reported on its own (FirstFanout),
// not in the runs compared.
func (b *Bench) timeFanouts(ctx context.Context, store *redisstore.Store, w *fanout.Pool, star *seed.Star, out *Fanout) error {
	if err := lpushScript.Load(ctx, b.rdb).Err(); err != nil {
		return err
	}
	var total counts
	for run := range b.cfg.FanoutRuns + 1 {
		entry, c, err := b.timeFanout(ctx, store, w, star, run, out)
		if err != nil {
			return err
		}
		if run > 0 {
			total = total.plus(c)
		}
		if err := b.timeRawWrites(ctx, star.Followers, entry, out); err != nil {
			return err
		}
		d, err := b.timeFollowerReads(ctx, store, star.Celebrity, store.Feed().FanoutBatch)
		if err != nil {
			return err
		}
		out.ScanFollowers = append(out.ScanFollowers, d)
		if run == 0 {
			out.FirstFanout, out.FirstRawLPush = out.FanoutTime[0], out.RawLPush[0]
			out.FanoutTime, out.RawLPush, out.RawZAdd, out.RawScript, out.ScanFollowers = nil, nil, nil, nil, nil
		}
	}
	out.FanoutRT = float64(total.roundTrips) / float64(b.cfg.FanoutRuns)
	out.FanoutCmds = float64(total.commands) / float64(b.cfg.FanoutRuns)
	return nil
}

// timeFanout creates one post by the celebrity and times the worker's
// fan-out of it; after the first, it counts the followers it reached. It
// returns the post's home entry and the fan-out's Redis traffic.
func (b *Bench) timeFanout(ctx context.Context, store *redisstore.Store, w *fanout.Pool, star *seed.Star, run int, out *Fanout) (string, counts, error) {
	post, err := store.CreatePost(ctx, star.Celebrity, social.NewPost{Content: "fan-out run " + strconv.Itoa(run)})
	if err != nil {
		return "", counts{}, err
	}
	c0 := b.counts()
	t0 := time.Now()
	if err := drain(ctx, w, 1); err != nil {
		return "", counts{}, err
	}
	out.FanoutTime = append(out.FanoutTime, time.Since(t0))
	c := b.counts().since(c0)
	entry := homeEntry(post.ID, star.Celebrity)
	if run == 0 {
		if out.Delivered, err = b.countHeads(ctx, store, star.Followers, entry); err != nil {
			return "", counts{}, err
		}
	}
	b.logf("bench: fan-out run %d: %s", run, ms(out.FanoutTime[len(out.FanoutTime)-1]))
	return entry, c, nil
}

// timeRawWrites times the baselines of one run: entry written raw to every
// follower's list by LPUSH, by ZADD, and by a script that only LPUSHes.
func (b *Bench) timeRawWrites(ctx context.Context, followers []string, entry string, out *Fanout) error {
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
		d, err := b.rawWrites(ctx, raw.prefix, followers, raw.write)
		if err != nil {
			return err
		}
		*raw.into = append(*raw.into, d)
	}
	return nil
}

// timeFollowerReads times reading the author's followers alone, batch at a
// time by rank, as follower_page.lua reads them.
func (b *Bench) timeFollowerReads(ctx context.Context, store *redisstore.Store, author string, batch int) (time.Duration, error) {
	t0 := time.Now()
	for start := int64(0); ; start += int64(batch) {
		page, err := b.rdb.ZRange(ctx, store.Keys().Followers(author), start, start+int64(batch)-1).Result()
		if err != nil {
			return 0, err
		}
		if len(page) < batch {
			break
		}
	}
	return time.Since(t0), nil
}

// timeCreatePost times createPost with the worker idle, the 0-follower
// author and the celebrity in turn, and then discards the jobs it queued.
func (b *Bench) timeCreatePost(ctx context.Context, store *redisstore.Store, star *seed.Star, out *Fanout) error {
	for i := range b.cfg.CreatePosts {
		for _, a := range []struct {
			id   string
			into *[]time.Duration
		}{{star.Quiet, &out.CreateQuiet}, {star.Celebrity, &out.CreateCeleb}} {
			t0 := time.Now()
			if _, err := store.CreatePost(ctx, a.id, social.NewPost{Content: "latency " + strconv.Itoa(i)}); err != nil {
				return err
			}
			*a.into = append(*a.into, time.Since(t0))
		}
	}
	// Their jobs are not run: discard them (a stream made again by the
	// next worker).
	for _, q := range store.FanoutQueue() {
		if err := b.rdb.Del(ctx, q.Stream).Err(); err != nil {
			return err
		}
	}
	return nil
}

// timeCreatePostDuringFanout times createPost by the 0-follower author
// while a new worker fans a post out to every follower of the celebrity.
func (b *Bench) timeCreatePostDuringFanout(ctx context.Context, store *redisstore.Store, star *seed.Star, out *Fanout) error {
	w, err := newWorker(store)
	if err != nil {
		return err
	}
	if _, err := store.CreatePost(ctx, star.Celebrity, social.NewPost{Content: "under load"}); err != nil {
		return err
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
			return err
		}
		out.CreateDuring = append(out.CreateDuring, time.Since(t0))
		if i == 10*b.cfg.CreatePosts { // enough: wait for the fan-out
			derr, running = <-done, false
		}
	}
	return derr
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
