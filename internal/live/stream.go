package live

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// stream is one subscriber's state.
type stream struct {
	t   *Timelines
	v   social.Viewer
	ctx context.Context
	out chan *social.Post

	busy atomic.Bool // a worker runs or is about to
	due  atomic.Bool // the timer fired

	mu                     sync.Mutex // held by the worker
	sub                    *Sub
	resume                 bool // catch up from last before anything else
	known                  bool // last is where the client is: since, the home's newest post, or a post sent
	ended                  bool // out is closed
	err                    error
	seen                   *recent
	last                   int64 // newest post id sent (or the client's since)
	timer                  *time.Timer
	stopCtx                func() bool
	nextRecheck, nextTouch time.Time
	msgs                   []string
}

// kick makes sure a worker runs: something may be waiting. It never
// blocks (the hub calls it under its lock).
func (s *stream) kick() {
	if s.busy.CompareAndSwap(false, true) {
		go s.work()
	}
}

// work runs the stream's steps until nothing is waiting.
func (s *stream) work() {
	for {
		s.mu.Lock()
		if s.sub != nil && !s.ended {
			s.step()
		}
		s.mu.Unlock()
		s.busy.Store(false)
		// Whatever came after step looked is this worker's, unless a new
		// one started for it.
		if !s.waiting() || !s.busy.CompareAndSwap(false, true) {
			return
		}
	}
}

// waiting reports whether there is work for a worker.
func (s *stream) waiting() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sub == nil || s.ended {
		return false
	}
	select {
	case <-s.sub.Done():
		return true
	case <-s.ctx.Done():
		return true
	default:
	}
	return s.resume || s.due.Load() || len(s.sub.C()) > 0 || len(s.sub.Resync()) > 0
}

// step does what is waiting, in order of precedence.
func (s *stream) step() {
	if s.ctx.Err() != nil {
		s.end(nil)
		return
	}
	select {
	case <-s.sub.Done():
		var err error
		switch e := s.sub.Err(); {
		case errors.Is(e, ErrSlow):
			err = social.Errorf(social.RateLimited,
				"subscription dropped: the client did not keep up with its timeline; subscribe again with since")
		case e != nil && !errors.Is(e, ErrClosed):
			err = e
		}
		s.end(err)
		return
	default:
	}
	if s.due.Swap(false) && !s.periodic() {
		return
	}
	select {
	case <-s.sub.Resync():
		s.resume = true
	default:
	}
	if s.resume {
		s.resume = false
		if !s.catchUp(s.ctx) {
			s.end(s.err)
			return
		}
	}
	for len(s.sub.C()) > 0 {
		s.msgs = s.msgs[:0]
		for len(s.msgs) < batch && len(s.sub.C()) > 0 {
			s.msgs = append(s.msgs, (<-s.sub.C()).Payload)
		}
		if err := s.deliver(s.ctx, s.msgs); err != nil {
			if s.ctx.Err() != nil {
				s.end(nil)
				return
			}
			// Redis failed between the announcement and the check: the
			// posts are in the home timeline, read them there.
			s.t.log().Warn("live: delivery check failed, catching up", "viewer", s.v.UserID, "err", err)
			if !s.catchUp(s.ctx) {
				s.end(s.err)
				return
			}
		}
	}
	if cap(s.msgs) > 0 && len(s.sub.C()) == 0 {
		s.msgs = nil // idle again: give the batch back
	}
}

// periodic runs the timer's work: the token's expiry, the revocation
// check, the activity mark; false when the stream ended.
func (s *stream) periodic() bool {
	now := time.Now()
	if !s.v.ExpiresAt.IsZero() && !now.Before(s.v.ExpiresAt) {
		s.end(social.Errorf(social.Unauthenticated, "access token expired: subscribe again with a fresh token"))
		return false
	}
	if !now.Before(s.nextRecheck) {
		s.nextRecheck = now.Add(orDefault(s.t.RecheckAuth, 30*time.Second))
		// An error (Redis unavailable) is checked again next time.
		if revoked, err := s.t.Sessions.Revoked(s.ctx, s.v.TokenID, s.v.Session, s.v.UserID); err == nil && revoked {
			s.end(social.Errorf(social.Unauthenticated, "access token revoked: subscribe again with a fresh token"))
			return false
		}
	}
	if !now.Before(s.nextTouch) {
		s.nextTouch = now.Add(orDefault(s.t.TouchEvery, time.Hour))
		_, _ = s.touch(s.ctx)
	}
	s.timer.Reset(s.untilNext(time.Now()))
	return true
}

// untilNext is the time until the timer's next work.
func (s *stream) untilNext(now time.Time) time.Duration {
	next := s.nextRecheck
	if s.nextTouch.Before(next) {
		next = s.nextTouch
	}
	if !s.v.ExpiresAt.IsZero() && s.v.ExpiresAt.Before(next) {
		next = s.v.ExpiresAt
	}
	return max(0, next.Sub(now))
}

// end closes the stream with err (nil: nothing to tell the client).
func (s *stream) end(err error) {
	s.ended = true
	s.t.release(s.v.UserID)
	s.err = err
	s.timer.Stop()
	s.stopCtx()
	s.sub.Close()
	close(s.out)
}

// deliver checks announced posts and sends those to show, oldest first.
func (s *stream) deliver(ctx context.Context, msgs []string) error {
	posts, err := s.t.Store.LivePosts(ctx, s.v.UserID, msgs)
	if err != nil {
		return err
	}
	posts = slices.DeleteFunc(posts, func(p *social.Post) bool { return p == nil })
	slices.SortFunc(posts, func(a, b *social.Post) int { return cmpID(a.ID, b.ID) })
	for _, p := range posts {
		if !s.send(ctx, p) {
			return nil
		}
	}
	return nil
}

// send sends p unless it was sent already, as it now is: a post edited
// since it was sent goes again (its edit is announced again); false when
// the stream must end.
func (s *stream) send(ctx context.Context, p *social.Post) bool {
	id, _ := strconv.ParseInt(p.ID, 10, 64)
	var edited int64
	if p.EditedAt != nil {
		edited = p.EditedAt.UnixMilli()
	}
	if !s.seen.add(id, edited) {
		return true
	}
	select {
	case s.out <- p:
		s.last, s.known = max(s.last, id), true
		return true
	case <-ctx.Done():
		return false
	case <-s.sub.Done():
		// Dropped while the client was not reading: run sees it next.
		return true
	}
}

// catchUp sends the posts of the home timeline newer than the newest sent,
// oldest first, retrying with backoff while Redis is unavailable; false
// when the stream must end.
func (s *stream) catchUp(ctx context.Context) bool {
	wait := 100 * time.Millisecond
	for {
		posts, err := s.missed(ctx)
		if err == nil {
			for _, p := range posts {
				if !s.send(ctx, p) {
					return false
				}
			}
			return true
		}
		if social.ErrorCode(err) != social.Internal {
			s.err = err
			return false
		}
		if ctx.Err() != nil {
			return false
		}
		if !s.wait(ctx, wait) {
			// Ended, or dropped: then run reports why.
			return ctx.Err() == nil
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// wait waits d before the store is read again; false when ctx ended or the
// subscription was dropped. Announcements that arrive meanwhile are
// discarded: their posts are in the home timeline (announced in the step
// that put them there) or a pulled author's, which the next read brings.
// Kept, they would fill the subscriber's buffer while Redis is failing
// (a failover) and have it dropped as too slow.
func (s *stream) wait(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-s.sub.Done():
			return false
		case <-s.sub.C():
		case <-t.C:
			return true
		}
	}
}

// missed reads the home timeline down to the newest post sent, through the
// read path every page takes (visibility included), and returns what is
// newer, oldest first. A stream that does not know where its client is yet
// (its first read of the home timeline failed and it has sent nothing)
// takes the newest post as that place and replays nothing.
func (s *stream) missed(ctx context.Context) ([]*social.Post, error) {
	if !s.known {
		newest, err := s.touch(ctx)
		if err != nil {
			return nil, err
		}
		s.last, s.known = max(s.last, newest), true
		return nil, nil
	}
	limit := orDefault(s.t.ReplayLimit, 1000)
	var got []*social.Post
	p := social.PageRequest{First: social.MaxFirst}
	for {
		page, err := s.t.Store.HomePage(ctx, s.v.UserID, p, readplan.PageWants{})
		if err != nil {
			return nil, fmt.Errorf("replay home timeline of %s: %w", s.v.UserID, err)
		}
		c := page.Posts
		for _, post := range c.Items {
			id, _ := strconv.ParseInt(post.ID, 10, 64)
			if id <= s.last {
				slices.Reverse(got)
				return got, nil
			}
			if len(got) == limit {
				return nil, social.Errorf(social.BadUserInput,
					"more than %d posts were missed: read the timeline, then subscribe again with the newest post id as since", limit)
			}
			got = append(got, post)
		}
		if !c.HasNext || len(c.Items) == 0 {
			slices.Reverse(got)
			return got, nil
		}
		p.After = c.Cursors[len(c.Cursors)-1]
	}
}

// touch reads the newest post of the home timeline and returns its id (0
// for an empty timeline): the read counts as activity for hybrid fan-out,
// and rebuilds a list fan-out skipped meanwhile.
func (s *stream) touch(ctx context.Context) (int64, error) {
	page, err := s.t.Store.HomePage(ctx, s.v.UserID, social.PageRequest{First: 1}, readplan.PageWants{})
	if err != nil || len(page.Posts.Items) == 0 {
		return 0, err
	}
	id, _ := strconv.ParseInt(page.Posts.Items[0].ID, 10, 64)
	return id, nil
}

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// cmpID orders decimal ids numerically.
func cmpID(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// recent is a bounded set of the last ids added, each with the version
// (edit time) last added. It grows as ids come, so an idle subscriber
// costs next to nothing.
type recent struct {
	ids  map[int64]int64
	ring []int64
	size int
	next int
}

func newRecent(n int) *recent { return &recent{ids: make(map[int64]int64), size: n} }

// add adds id at version and reports whether it was new, or held at an
// older version.
func (r *recent) add(id, version int64) bool {
	if v, ok := r.ids[id]; ok {
		if version <= v {
			return false
		}
		r.ids[id] = version
		return true
	}
	if len(r.ring) < r.size {
		r.ring = append(r.ring, id)
	} else {
		delete(r.ids, r.ring[r.next])
		r.ring[r.next] = id
		r.next = (r.next + 1) % len(r.ring)
	}
	r.ids[id] = version
	return true
}
