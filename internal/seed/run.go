package seed

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

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
	r := &run{store: store, c: c, plan: plan, d: &Data{Config: c,
		UserIDs: make([]string, plan.Users), PostIDs: make([]string, len(plan.Posts)),
		Following: make([]int, plan.Users), Followers: make([]int, plan.Users)}}
	c.Log("seed: plan: %d users, %d follows, %d posts, %d likes, %d comments (%.1fs)",
		plan.Users, len(plan.Follows), len(plan.Posts), len(plan.Likes), len(plan.Comments), time.Since(start).Seconds())
	steps := []func(context.Context) error{r.users, r.follows}
	// A first read makes users active: hybrid fan-out pushes to them.
	if store.Feed().Mode == redisstore.Hybrid {
		steps = append(steps, r.activity)
	}
	steps = append(steps, r.posts, r.engage, r.drained)
	for _, step := range steps {
		if err := step(ctx); err != nil {
			return nil, err
		}
	}
	d := r.d
	d.Stats.Total = time.Since(start)
	c.Log("seed: total %.1fs (%d skipped writes)", d.Stats.Total.Seconds(), d.Stats.Skipped)
	return d, nil
}

// run is one Run's state: the plan, what was written, and what the store
// refused as the API would (skipped).
type run struct {
	store   *redisstore.Store
	c       Config
	plan    *Plan
	d       *Data
	skipped atomic.Int64
}

// phase records that the phase name, begun at t, is over and logs it.
func (r *run) phase(name string, t time.Time, format string, args ...any) {
	r.d.Stats.Phases = append(r.d.Stats.Phases, Phase{name, time.Since(t)})
	r.c.Log("seed: %-9s %6.1fs  "+format, append([]any{name, time.Since(t).Seconds()}, args...)...)
}

// users creates the plan's users, all with one precomputed password hash.
func (r *run) users(ctx context.Context) error {
	t := time.Now()
	c, d := r.c, r.d
	hash, err := auth.NewPasswords(1).Hash(c.Password)
	if err != nil {
		return err
	}
	err = each(ctx, r.plan.Users, c.Concurrency, func(ctx context.Context, i int) error {
		name := c.Name(i)
		u, err := r.store.CreateUser(ctx, social.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: hash})
		if err != nil {
			return fmt.Errorf("create user %s: %w", name, err)
		}
		d.UserIDs[i] = u.ID
		return nil
	})
	if err != nil {
		return err
	}
	d.Stats.Users = r.plan.Users
	r.phase("users", t, "%d users", r.plan.Users)
	return nil
}

// follows makes the plan's follows and counts them per user.
func (r *run) follows(ctx context.Context) error {
	t := time.Now()
	plan, d := r.plan, r.d
	err := each(ctx, len(plan.Follows), r.c.Concurrency, func(ctx context.Context, i int) error {
		f := plan.Follows[i]
		return r.store.Follow(ctx, d.UserIDs[f[0]], d.UserIDs[f[1]])
	})
	if err != nil {
		return fmt.Errorf("follow: %w", err)
	}
	for _, f := range plan.Follows {
		d.Following[f[0]]++
		d.Followers[f[1]]++
	}
	d.Stats.Follows = len(plan.Follows)
	r.phase("follows", t, "%d follows", len(plan.Follows))
	return nil
}

// activity reads the home timeline of the active users once. The others
// are aged as INACTIVE_DAYS without a read would: their home list and
// mark go (Redis expires them), so fan-out skips them.
func (r *run) activity(ctx context.Context) error {
	t := time.Now()
	plan, d := r.plan, r.d
	err := each(ctx, plan.Users, r.c.Concurrency, func(ctx context.Context, i int) error {
		if !plan.Active[i] {
			return r.store.ForgetHome(ctx, d.UserIDs[i])
		}
		_, err := r.store.HomePage(ctx, d.UserIDs[i], social.PageRequest{First: 1}, readplan.PageWants{})
		return err
	})
	if err != nil {
		return fmt.Errorf("first read: %w", err)
	}
	active := 0
	for _, a := range plan.Active {
		if a {
			active++
		}
	}
	r.phase("activity", t, "%d users read their home timeline", active)
	return nil
}

// posts creates the plan's posts batch by batch, with a fan-out worker
// delivering them meanwhile.
func (r *run) posts(ctx context.Context) error {
	t := time.Now()
	plan, d := r.plan, r.d
	w, err := newWorker(r.store)
	if err != nil {
		return err
	}
	stopWorker := drainLoop(ctx, w)
	for b := 0; b < len(plan.Posts) && err == nil; b += postBatch {
		batch := plan.Posts[b:min(b+postBatch, len(plan.Posts))]
		err = each(ctx, len(batch), r.c.Concurrency, func(ctx context.Context, i int) error {
			return r.post(ctx, b+i)
		})
	}
	if werr := stopWorker(); err == nil {
		err = werr
	}
	if err != nil {
		return err
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
	r.phase("posts", t, "%d posts (%d reposts, %d ONLY_TO, %d NOT_TO), %d fan-out jobs",
		d.Stats.Posts, d.Stats.Reposts, d.Stats.OnlyTo, d.Stats.NotTo, st.Processed)
	return nil
}

// post creates the plan's post i; a repost of a post that was skipped is
// skipped too.
func (r *run) post(ctx context.Context, i int) error {
	pp, d := r.plan.Posts[i], r.d
	in := social.NewPost{Content: pp.Content}
	if pp.RepostOf >= 0 {
		if in.RepostOf = d.PostIDs[pp.RepostOf]; in.RepostOf == "" {
			r.skipped.Add(1)
			return nil
		}
	}
	switch pp.Vis {
	case social.OnlyTo:
		in.OnlyTo = d.ids(pp.Audience)
	case social.NotTo:
		in.NotTo = d.ids(pp.Audience)
	}
	post, err := r.store.CreatePost(ctx, d.UserIDs[pp.Author], in)
	if tolerated(err) {
		r.skipped.Add(1)
		return nil
	}
	if err != nil {
		return fmt.Errorf("create post: %w", err)
	}
	d.PostIDs[i] = post.ID
	return nil
}

// engage makes the plan's likes and comments, interleaved.
func (r *run) engage(ctx context.Context) error {
	t := time.Now()
	plan, d := r.plan, r.d
	nl := len(plan.Likes)
	var likes, comments atomic.Int64
	err := each(ctx, nl+len(plan.Comments), r.c.Concurrency, func(ctx context.Context, i int) error {
		var err error
		if i < nl {
			l := plan.Likes[i]
			if d.PostIDs[l[0]] == "" {
				return nil
			}
			if err = r.store.Like(ctx, d.UserIDs[l[1]], d.PostIDs[l[0]]); err == nil {
				likes.Add(1)
			}
		} else {
			cm := plan.Comments[i-nl]
			if d.PostIDs[cm.Post] == "" {
				return nil
			}
			if _, err = r.store.AddComment(ctx, d.UserIDs[cm.Author], d.PostIDs[cm.Post], cm.Content); err == nil {
				comments.Add(1)
			}
		}
		if tolerated(err) {
			r.skipped.Add(1)
			return nil
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("likes and comments: %w", err)
	}
	d.Stats.Likes, d.Stats.Comments = int(likes.Load()), int(comments.Load())
	d.Stats.Skipped = int(r.skipped.Load())
	r.phase("engage", t, "%d likes, %d comments", d.Stats.Likes, d.Stats.Comments)
	return nil
}

// drained delivers the notification jobs that likes and comments queued
// and checks that the fan-out queue is empty.
func (r *run) drained(ctx context.Context) error {
	if err := Deliver(ctx, r.store); err != nil {
		return fmt.Errorf("notifications: %w", err)
	}
	queued, dead, err := fanout.BacklogAll(ctx, r.store.Client(), r.store.FanoutQueue())
	if err != nil {
		return err
	}
	if queued != 0 || dead != 0 {
		return fmt.Errorf("fan-out queue not drained: %d queued, %d dead-lettered", queued, dead)
	}
	return nil
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
