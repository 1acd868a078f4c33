package live

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Store is what a live timeline reads.
type Store interface {
	// LiveChannels are the channels announcing the posts that land in
	// viewerID's home timeline.
	LiveChannels(viewerID string) []string
	// LivePosts checks announced posts at delivery time: nil for those
	// viewerID's home timeline would not show now.
	LivePosts(ctx context.Context, viewerID string, messages []string) ([]*social.Post, error)
	// HomePage is the home timeline's read path, for the replays.
	HomePage(ctx context.Context, viewerID string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error)
}

// Sessions tells whether an access token was revoked since it was checked
// (social.SessionStore's check: denied, its session or its user gone).
type Sessions interface {
	Revoked(ctx context.Context, jti, family, userID string) (bool, error)
}

// Timelines streams home timelines to their subscribers.
type Timelines struct {
	Hub      *Hub
	Store    Store
	Sessions Sessions
	// RecheckAuth is how often an open subscription checks that its token
	// was not revoked (logout). Default 30s.
	RecheckAuth time.Duration
	// TouchEvery is how often an open subscription counts as a read of
	// the home timeline, so hybrid fan-out never skips a live reader as
	// inactive. Default 1h.
	TouchEvery time.Duration
	// ReplayLimit is the most posts a resume replays; a client further
	// behind reads the timeline instead. Default 1000.
	ReplayLimit int
	// MaxPerViewer bounds one user's open streams in this process (tabs,
	// devices, reconnects not yet noticed): one more is refused with
	// RATE_LIMITED. Default 16.
	MaxPerViewer int
	// MaxStreams bounds the streams open in this process, whoever holds
	// them: an idle one costs about 61 KB (docs/performance.md), so
	// without a bound connections alone could exhaust memory. Default
	// 20 000.
	MaxStreams int
	Log        *slog.Logger

	mu    sync.Mutex
	open  map[string]int // open streams by viewer
	total int
}

// Defaults of the stream bounds.
const (
	DefaultMaxPerViewer = 16
	DefaultMaxStreams   = 20000
)

// acquire counts a new stream of viewer, or refuses it over a bound.
func (t *Timelines) acquire(viewer string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if n := orDefault(t.MaxStreams, DefaultMaxStreams); t.total >= n {
		return &social.Error{Code: social.RateLimited, RetryAfter: 30 * time.Second,
			Message: "this server holds as many live subscriptions as it can: retry shortly"}
	}
	if n := orDefault(t.MaxPerViewer, DefaultMaxPerViewer); t.open[viewer] >= n {
		return &social.Error{Code: social.RateLimited, RetryAfter: 30 * time.Second,
			Message: fmt.Sprintf("at most %d live subscriptions per user at once: close one first", n)}
	}
	if t.open == nil {
		t.open = make(map[string]int)
	}
	t.open[viewer]++
	t.total++
	return nil
}

// release uncounts a stream of viewer.
func (t *Timelines) release(viewer string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.open[viewer]--; t.open[viewer] <= 0 {
		delete(t.open, viewer)
	}
	t.total--
}

// batch is the most announced posts checked in one round trip.
const batch = 100

// seenSize is how many recent post ids a stream remembers to skip repeats
// (a post both replayed and announced, an announcement repeated).
const seenSize = 1024

// Stream streams viewer's home timeline: with since (a post id), first the
// posts newer than it, oldest first, then each post as it lands. The
// channel is closed when ctx ends or the stream ends on its own; then end
// reports why (nil when ctx ended): the token expired or was revoked
// (UNAUTHENTICATED), the client fell behind (RATE_LIMITED), or since is too
// far back (BAD_USER_INPUT).
//
// An idle stream holds no goroutine: the hub's notifications, a timer and
// the context's end start one that works until nothing is left to do.
// Idle subscribers are most of them, and a goroutine's stack would be
// most of what one costs (docs/performance.md).
func (t *Timelines) Stream(ctx context.Context, v social.Viewer, since string) (posts <-chan *social.Post, end func() error, err error) {
	var after int64
	if since != "" {
		after, err = strconv.ParseInt(since, 10, 64)
		if err != nil || !social.IsID(since) {
			return nil, nil, social.Errorf(social.BadUserInput, "since must be a post id")
		}
	}
	if err := t.acquire(v.UserID); err != nil {
		return nil, nil, err
	}
	s := &stream{t: t, v: v, ctx: ctx, out: make(chan *social.Post), seen: newRecent(seenSize), last: after,
		known: since != "", resume: since != ""}
	// No worker until the stream is set up (kick starts one only when
	// none is busy): one started by an early message would hold s.mu
	// while its send waits for a reader, and nobody reads before Stream
	// returns.
	s.busy.Store(true)
	sub, err := t.Hub.Subscribe(ctx, s.kick, t.Store.LiveChannels(v.UserID)...)
	if errors.Is(err, ErrClosed) {
		// The process is shutting down: a stream that starts now ends as
		// the open ones do, completed, and the client reconnects
		// elsewhere.
		t.release(v.UserID)
		done := make(chan *social.Post)
		close(done)
		return done, func() error { return nil }, nil
	}
	if err != nil {
		t.release(v.UserID)
		return nil, nil, fmt.Errorf("subscribe to the live timeline of %s: %w", v.UserID, err)
	}
	s.mu.Lock()
	s.sub = sub
	now := time.Now()
	s.nextRecheck = now.Add(orDefault(t.RecheckAuth, 30*time.Second))
	s.nextTouch = now.Add(orDefault(t.TouchEvery, time.Hour))
	s.timer = time.AfterFunc(s.untilNext(now), func() { s.due.Store(true); s.kick() })
	s.stopCtx = context.AfterFunc(ctx, s.kick)
	s.mu.Unlock()
	if !s.resume {
		// Here rather than in a worker: the stack this read grows stays
		// with the caller's goroutine.
		// Its newest post is where a catch-up starts (after a lost
		// connection) until a post is sent: not the whole timeline.
		newest, err := s.touch(ctx)
		if err != nil && ctx.Err() == nil {
			t.log().Warn("live: first home read failed", "viewer", v.UserID, "err", err)
		}
		if err == nil {
			s.mu.Lock()
			s.last, s.known = max(s.last, newest), true
			s.mu.Unlock()
		}
	}
	// Subscribed first, then the store: whatever lands from now on is
	// announced, whatever landed before is in the home timeline.
	s.busy.Store(false)
	s.kick()
	return s.out, func() error { return s.err }, nil
}

func (t *Timelines) log() *slog.Logger {
	if t.Log == nil {
		return slog.Default()
	}
	return t.Log
}
