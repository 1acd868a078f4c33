// Package seed builds a realistic data set through the store's own write
// APIs, so that the keys are laid out exactly as the gateway lays them out:
// users with power-law follower counts, posts with power-law author
// activity (some reposts, a few ONLY_TO and NOT_TO audiences), likes and
// comments with power-law counts per post, all decided in advance from a
// seed (NewPlan) and delivered to home timelines by the real fan-out
// worker. cmd/bench and the benchmarks use it.
package seed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// Config says what to build.
type Config struct {
	Users, Posts int
	Seed         uint64
	// Concurrency is how many store calls run at once (default 16).
	Concurrency int
	// ActiveShare is the share of users whose home timeline is read once
	// before anyone posts (default 1: everyone). In hybrid mode fan-out
	// skips the others, whose timelines are rebuilt when they first read.
	ActiveShare float64
	// Password of every user (default "seed password"); it is hashed once.
	Password string
	// Log, when set, is told what each phase did.
	Log func(format string, args ...any) `json:"-"`
	// Name, when set, names the user of plan index i (default UserName);
	// names must be valid and distinct.
	Name func(i int) string `json:"-"`
	// Text, when set, writes the content of posts, reposts and comments
	// (default: random words), drawing only from rng so that the plan
	// stays the same for the same Config.
	Text func(rng *rand.Rand, kind TextKind) string `json:"-"`
}

// TextKind says what a text is for.
type TextKind int

// The texts a plan needs.
const (
	PostText    TextKind = iota // 20–200 characters
	RepostText                  // 5–60 characters
	CommentText                 // 5–120 characters
)

// Full is the data set of docs/performance.md.
func Full() Config { return Config{Users: 10000, Posts: 100000, Seed: 1} }

// Small is the data set of the go test benchmarks.
func Small() Config { return Config{Users: 500, Posts: 5000, Seed: 1} }

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	if c.ActiveShare == 0 {
		c.ActiveShare = 1
	}
	if c.Password == "" {
		c.Password = "seed password"
	}
	if c.Log == nil {
		c.Log = func(string, ...any) {}
	}
	if c.Name == nil {
		c.Name = UserName
	}
	if c.Text == nil {
		c.Text = wordSalad
	}
	return c
}

// Data is what Run built: the plan's users and posts with their ids.
type Data struct {
	Config  Config   `json:"config"`
	UserIDs []string `json:"user_ids"` // by plan index
	// Following and Followers count each user's follows, by plan index.
	Following []int    `json:"following"`
	Followers []int    `json:"followers"`
	PostIDs   []string `json:"-"` // by plan index; "" when skipped
	Stats     Stats    `json:"stats"`
}

// Stats count what Run wrote and how long it took.
type Stats struct {
	Users, Follows, Posts, Reposts, OnlyTo, NotTo, Likes, Comments int
	// Skipped counts writes the store refused as the API would (a like of
	// a post hidden from the liker, …); the plan avoids them, so it is 0.
	Skipped    int
	FanoutJobs int64 // fan-out jobs the worker handled
	Phases     []Phase
	Total      time.Duration
}

// Phase is one step of Run and its duration.
type Phase struct {
	Name     string
	Duration time.Duration
}

// Run writes the data set of c into store, which must hold no other data
// under its prefix: users (CreateUser, with one precomputed password hash),
// follows (Follow), a first home-timeline read of the active users, posts
// (CreatePost) with a fan-out worker draining the queue as they arrive,
// then likes (Like) and comments (AddComment). It returns when the fan-out
// queue is empty.
//
// The plan, and so the data, is the same for the same c; ids may differ
// between runs in the order concurrent writes were given them.
func Run(ctx context.Context, store *redisstore.Store, c Config) (*Data, error) {
	c = c.withDefaults()
	start := time.Now()
	plan := NewPlan(c)
	d := &Data{Config: c, UserIDs: make([]string, plan.Users), PostIDs: make([]string, len(plan.Posts)),
		Following: make([]int, plan.Users), Followers: make([]int, plan.Users)}
	phase := func(name string, t time.Time, format string, args ...any) {
		d.Stats.Phases = append(d.Stats.Phases, Phase{name, time.Since(t)})
		c.Log("seed: %-9s %6.1fs  "+format, append([]any{name, time.Since(t).Seconds()}, args...)...)
	}
	c.Log("seed: plan: %d users, %d follows, %d posts, %d likes, %d comments (%.1fs)",
		plan.Users, len(plan.Follows), len(plan.Posts), len(plan.Likes), len(plan.Comments), time.Since(start).Seconds())

	// Users.
	t := time.Now()
	hash, err := auth.NewPasswords(1).Hash(c.Password)
	if err != nil {
		return nil, err
	}
	err = each(ctx, plan.Users, c.Concurrency, func(ctx context.Context, i int) error {
		name := c.Name(i)
		u, err := store.CreateUser(ctx, auth.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: hash})
		if err != nil {
			return fmt.Errorf("create user %s: %w", name, err)
		}
		d.UserIDs[i] = u.ID
		return nil
	})
	if err != nil {
		return nil, err
	}
	d.Stats.Users = plan.Users
	phase("users", t, "%d users", plan.Users)

	// Follows.
	t = time.Now()
	err = each(ctx, len(plan.Follows), c.Concurrency, func(ctx context.Context, i int) error {
		f := plan.Follows[i]
		return store.Follow(ctx, d.UserIDs[f[0]], d.UserIDs[f[1]])
	})
	if err != nil {
		return nil, fmt.Errorf("follow: %w", err)
	}
	for _, f := range plan.Follows {
		d.Following[f[0]]++
		d.Followers[f[1]]++
	}
	d.Stats.Follows = len(plan.Follows)
	phase("follows", t, "%d follows", len(plan.Follows))

	// A first read makes users active: hybrid fan-out pushes to them. The
	// others are aged as INACTIVE_DAYS without a read would: their home
	// list and mark go (Redis expires them), so fan-out skips them.
	if store.Feed().Mode == redisstore.Hybrid {
		t = time.Now()
		active := 0
		err = each(ctx, plan.Users, c.Concurrency, func(ctx context.Context, i int) error {
			if !plan.Active[i] {
				return store.ForgetHome(ctx, d.UserIDs[i])
			}
			_, err := store.HomePage(ctx, d.UserIDs[i], social.PageRequest{First: 1}, readplan.PageWants{})
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("first read: %w", err)
		}
		for _, a := range plan.Active {
			if a {
				active++
			}
		}
		phase("activity", t, "%d users read their home timeline", active)
	}

	// Posts, with the worker delivering them meanwhile.
	t = time.Now()
	w, err := newWorker(store)
	if err != nil {
		return nil, err
	}
	stopWorker := drainLoop(ctx, w)
	var skipped atomic.Int64
	for b := 0; b < len(plan.Posts) && err == nil; b += postBatch {
		batch := plan.Posts[b:min(b+postBatch, len(plan.Posts))]
		err = each(ctx, len(batch), c.Concurrency, func(ctx context.Context, i int) error {
			pp := batch[i]
			in := social.NewPost{Content: pp.Content}
			if pp.RepostOf >= 0 {
				if in.RepostOf = d.PostIDs[pp.RepostOf]; in.RepostOf == "" {
					skipped.Add(1)
					return nil
				}
			}
			switch pp.Vis {
			case social.OnlyTo:
				in.OnlyTo = d.ids(pp.Audience)
			case social.NotTo:
				in.NotTo = d.ids(pp.Audience)
			}
			post, err := store.CreatePost(ctx, d.UserIDs[pp.Author], in)
			if tolerated(err) {
				skipped.Add(1)
				return nil
			}
			if err != nil {
				return fmt.Errorf("create post: %w", err)
			}
			d.PostIDs[b+i] = post.ID
			return nil
		})
	}
	if werr := stopWorker(); err == nil {
		err = werr
	}
	if err != nil {
		return nil, err
	}
	for i, pp := range plan.Posts {
		if d.PostIDs[i] == "" {
			continue
		}
		d.Stats.Posts++
		switch {
		case pp.RepostOf >= 0:
			d.Stats.Reposts++
		case pp.Vis == social.OnlyTo:
			d.Stats.OnlyTo++
		case pp.Vis == social.NotTo:
			d.Stats.NotTo++
		}
	}
	st := w.Stats()
	d.Stats.FanoutJobs = st.Processed
	phase("posts", t, "%d posts (%d reposts, %d ONLY_TO, %d NOT_TO), %d fan-out jobs",
		d.Stats.Posts, d.Stats.Reposts, d.Stats.OnlyTo, d.Stats.NotTo, st.Processed)

	// Likes and comments, interleaved.
	t = time.Now()
	nl := len(plan.Likes)
	var likes, comments atomic.Int64
	err = each(ctx, nl+len(plan.Comments), c.Concurrency, func(ctx context.Context, i int) error {
		var err error
		if i < nl {
			l := plan.Likes[i]
			if d.PostIDs[l[0]] == "" {
				return nil
			}
			if err = store.Like(ctx, d.UserIDs[l[1]], d.PostIDs[l[0]]); err == nil {
				likes.Add(1)
			}
		} else {
			cm := plan.Comments[i-nl]
			if d.PostIDs[cm.Post] == "" {
				return nil
			}
			if _, err = store.AddComment(ctx, d.UserIDs[cm.Author], d.PostIDs[cm.Post], cm.Content); err == nil {
				comments.Add(1)
			}
		}
		if tolerated(err) {
			skipped.Add(1)
			return nil
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("likes and comments: %w", err)
	}
	d.Stats.Likes, d.Stats.Comments = int(likes.Load()), int(comments.Load())
	d.Stats.Skipped = int(skipped.Load())
	phase("engage", t, "%d likes, %d comments", d.Stats.Likes, d.Stats.Comments)

	// Likes and comments queue their notifications' jobs.
	if err := Deliver(ctx, store); err != nil {
		return nil, fmt.Errorf("notifications: %w", err)
	}
	queued, dead, err := fanout.BacklogAll(ctx, store.Client(), store.FanoutQueue())
	if err != nil {
		return nil, err
	}
	if queued != 0 || dead != 0 {
		return nil, fmt.Errorf("fan-out queue not drained: %d queued, %d dead-lettered", queued, dead)
	}
	d.Stats.Total = time.Since(start)
	c.Log("seed: total %.1fs (%d skipped writes)", d.Stats.Total.Seconds(), d.Stats.Skipped)
	return d, nil
}

// UserName is the name of the user of plan index i.
func UserName(i int) string { return "user" + strconv.Itoa(1000000 + i)[1:] }

func (d *Data) ids(us []int32) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = d.UserIDs[u]
	}
	return out
}

// Readers returns up to n plan indexes of users who follow at least
// minFollowing others, spread over all such users, the same ones for the
// same data.
func (d *Data) Readers(n, minFollowing int) []int {
	var all []int
	for u, f := range d.Following {
		if f >= minFollowing {
			all = append(all, u)
		}
	}
	rng := rand.New(rand.NewPCG(d.Config.Seed, 0x4ead))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	all = all[:min(n, len(all))]
	slices.Sort(all)
	return all
}

// tolerated reports an error the API gives for a write that is not allowed
// (which the plan avoids): the write is skipped, not the run.
func tolerated(err error) bool {
	return social.IsCode(err, social.NotFound) || social.IsCode(err, social.Forbidden)
}

// newWorker returns a fan-out worker pool over store's queue shards, for
// drainLoop.
func newWorker(store *redisstore.Store) (*fanout.Pool, error) {
	return fanout.NewPool(store.Client(), fanout.Config{
		Consumer: "seed", Read: 64, Concurrency: 8, MinIdle: time.Minute,
	}, store.FanoutQueue(), store.HandleFanoutJob, nil)
}

// Deliver runs the fan-out jobs queued in store until the queue is empty,
// for writes made after Run (which delivers its own).
func Deliver(ctx context.Context, store *redisstore.Store) error {
	w, err := newWorker(store)
	if err != nil {
		return err
	}
	return drainLoop(ctx, w)()
}

// drainLoop runs w.Drain until stop is called, then drains what is left
// and reports the first error, or the jobs that failed.
func drainLoop(ctx context.Context, w *fanout.Pool) (stop func() error) {
	done := make(chan struct{})
	result := make(chan error, 1)
	go func() {
		stopping := false
		for {
			select {
			case <-done:
				stopping = true
			default:
			}
			n, err := w.Drain(ctx)
			if err != nil {
				result <- err
				return
			}
			if n > 0 {
				continue
			}
			if stopping {
				break
			}
			select {
			case <-done:
				stopping = true
			case <-time.After(5 * time.Millisecond):
			}
		}
		if st := w.Stats(); st.Failed > 0 || st.DeadLettered > 0 {
			result <- fmt.Errorf("fan-out: %d jobs failed, %d dead-lettered", st.Failed, st.DeadLettered)
			return
		}
		result <- nil
	}()
	return func() error {
		close(done)
		return <-result
	}
}

// each runs fn(i) for every i in [0, n), workers at a time, and returns the
// first error (the others stop taking work).
func each(ctx context.Context, n, workers int, fn func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := fn(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return context.Cause(ctx)
}

// metaKey is where Save keeps a Data, beside the data set's own keys.
func metaKey(prefix string) string { return prefix + "{seed}:meta" }

// Save records d in Redis under the data set's prefix, for Load.
func Save(ctx context.Context, rdb redis.UniversalClient, prefix string, d *Data) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	return rdb.Set(ctx, metaKey(prefix), b, 0).Err()
}

// ErrNoData says Load found no saved data set.
var ErrNoData = errors.New("no seeded data set under this prefix")

// Load returns the Data that Save recorded under prefix (PostIDs empty).
func Load(ctx context.Context, rdb redis.UniversalClient, prefix string) (*Data, error) {
	b, err := rdb.Get(ctx, metaKey(prefix)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNoData
	}
	if err != nil {
		return nil, err
	}
	d := &Data{}
	if err := json.Unmarshal(b, d); err != nil {
		return nil, fmt.Errorf("decode seeded data set: %w", err)
	}
	d.Config = d.Config.withDefaults()
	return d, nil
}

// Clear deletes every key under prefix (SCAN and UNLINK), so a data set can
// be built again. Use it only on a prefix of its own. On Redis Cluster it
// scans every master, and unlinks key by key in pipelines, since one
// UNLINK of keys in several slots is refused (CROSSSLOT).
func Clear(ctx context.Context, rdb redis.UniversalClient, prefix string) error {
	if prefix == "" {
		return errors.New("seed: refusing to clear an empty prefix")
	}
	pattern := escapeGlob(prefix) + "*"
	return redisstore.EachServer(ctx, rdb, func(ctx context.Context, c redis.UniversalClient) error {
		return clearNode(ctx, c, pattern)
	})
}

// clearNode unlinks the keys matching pattern on one server.
func clearNode(ctx context.Context, rdb redis.UniversalClient, pattern string) error {
	iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	var batch []string
	unlink := func() error {
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, k := range batch {
				p.Unlink(ctx, k)
			}
			return nil
		})
		batch = batch[:0]
		return err
	}
	for iter.Next(ctx) {
		batch = append(batch, iter.Val())
		if len(batch) == 1000 {
			if err := unlink(); err != nil {
				return err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(batch) > 0 {
		return unlink()
	}
	return nil
}

func escapeGlob(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// Star is a data set for measuring fan-out: one author followed by many,
// and one author followed by nobody.
type Star struct {
	Celebrity, Quiet string   // user ids
	Followers        []string // of Celebrity
	Duration         time.Duration
}

// NewStar builds a Star with n followers in store, through CreateUser and
// Follow, and reads every follower's home timeline once so that hybrid
// fan-out counts them as active (raise the store's celebrity threshold
// above n to have the celebrity pushed rather than pulled).
func NewStar(ctx context.Context, store *redisstore.Store, n, concurrency int) (*Star, error) {
	if concurrency <= 0 {
		concurrency = 16
	}
	start := time.Now()
	hash, err := auth.NewPasswords(1).Hash("seed password")
	if err != nil {
		return nil, err
	}
	ids := make([]string, n+2)
	err = each(ctx, n+2, concurrency, func(ctx context.Context, i int) error {
		name := "star" + strconv.Itoa(i)
		u, err := store.CreateUser(ctx, auth.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: hash})
		if err != nil {
			return fmt.Errorf("create user %s: %w", name, err)
		}
		ids[i] = u.ID
		return nil
	})
	if err != nil {
		return nil, err
	}
	s := &Star{Celebrity: ids[0], Quiet: ids[1], Followers: ids[2:]}
	err = each(ctx, n, concurrency, func(ctx context.Context, i int) error {
		if err := store.Follow(ctx, s.Followers[i], s.Celebrity); err != nil {
			return err
		}
		_, err := store.HomePage(ctx, s.Followers[i], social.PageRequest{First: 1}, readplan.PageWants{})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("follow the celebrity: %w", err)
	}
	s.Duration = time.Since(start)
	return s, nil
}
