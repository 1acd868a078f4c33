package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Home timelines.
//
// Home(u) is a LIST of entries "<post id>:<author id>", sorted by post id,
// newest first, at most HomeCap long. A list of short strings is stored as
// a quicklist of listpacks, several times smaller than a sorted set, which
// becomes a skiplist past 128 members (docs/performance.md, "Home-timeline
// memory", has the one measured figure). The author beside the id is what lets the page
// script drop unfollowed and muted authors, and the graph hooks remove an
// author's entries, without loading any post.
//
// HomeMark(u) is a hash of the list's bookkeeping:
//   - floor: the list holds every post of u's timeline with an id >= floor
//     (once fan-out is done); below it, pages pull from the followees' own
//     timelines. Trimming to the cap raises it to the oldest id kept; a
//     follow whose backfill was cut short raises it to the oldest id
//     copied; 0 or absent: the list is complete.
//   - active: the last home read (ms), written at most every activeEvery;
//   - pull, pullprev, pullat: pull mode's marks (see fillHome);
//   - stale: the list must be rebuilt before it is read. A read that finds
//     no mark writes it with stale, and only a rebuild that succeeds
//     clears it, so a rebuild that fails is tried again. (Earlier versions
//     wrote it when fan-out skipped u as inactive; their "mutes" field is
//     no longer read.)
//
// A list is kept only where its mark exists. Registration writes the mark
// (the empty list is complete); fan-out and the author's own posts create
// a missing list only where the mark exists, and a follow's backfill
// writes nothing where it does not; a read that finds no mark writes it
// (stale) and rebuilds the list from the followees' timelines before
// serving it.
//
// Inactive readers (hybrid mode): Home(u) and HomeMark(u) expire together,
// InactiveAfter after u's last read, as registration, each read at most
// every activeEvery, and each merge (a follow, an unmute, a rebuild) give
// both the full TTL, and a list that fan-out creates takes the mark's TTL
// (lib/home.lua). So fan-out tells an inactive reader by their missing
// list, whose head it reads anyway, and writes nothing for them; their
// memory is given back; and their next read rebuilds the list. Expiry
// runs on Redis's clock: the gateways' clocks only pace the renewals
// (active), and the workers' clocks decide nothing.
// Push and pull modes keep lists for good (a read removes a TTL left by
// hybrid mode).

// readHome reads one page of viewerID's home timeline: their own posts and
// those of the users they follow, newest first, as they may see them; f,
// when set, is what the page brings along (timeline_fetch.go), queued with the
// visibility check of the candidates.
//
// A page merges up to three sources, newest first:
//   - the home list, which holds every post of the timeline with an id at
//     or above its floor (read by homePageScript, which also drops authors
//     the reader no longer follows or muted);
//   - above the floor, the own timelines of the followed authors that are
//     pulled rather than pushed (celebrities, hybrid mode);
//   - below the floor (beyond the cap, or beyond a cut-short backfill), the
//     own timelines of everyone the reader follows, and the reader's own.
//
// The sources are merged first (ids order them), and only as many of the
// newest candidates as can still make the page pass the read-time
// visibility check (deleted posts, audience, blocks either way) and get
// the page's extras; when some turn out hidden, further rounds check the
// next ones (see candidates), from those in hand or a further read. A
// reader following many pulled authors thus pays one read per author and
// the checks of about one page. A page of a push-mode reader costs
// two round trips (the list script, then the visibility pipeline); pulled
// authors add one pipeline; a hybrid reader coming back after inactivity,
// and every first page in pull mode, first fill the list (three more:
// following list, pull pipeline, merge script).
func (s *TimelineService) readHome(ctx context.Context, viewerID string, p social.PageRequest, f *pageFetch) (social.Connection[*social.Post], error) {
	before, err := timelineCursor(p)
	if err != nil {
		return social.Connection[*social.Post]{}, err
	}
	if !social.IsID(viewerID) {
		return social.Connection[*social.Post]{}, social.Errorf(social.Unauthenticated, "authentication required")
	}
	if p.Before != "" {
		return s.readNewer(ctx, viewerID, p, f)
	}
	h := &homePage{s: s, viewer: viewerID, first: p.First, before: before, firstPage: p.After == "", fetch: f}
	c, err := h.read(ctx)
	if err != nil {
		return c, fmt.Errorf("home timeline of %s: %w", viewerID, err)
	}
	return c, nil
}

// homePage is the state of reading one home page.
type homePage struct {
	s         *TimelineService
	viewer    string
	first     int
	before    int64 // everything newer was read: the next round reads below it
	firstPage bool
	fetch     *pageFetch // what to read along with the posts, or nil

	floor     int64
	listDone  bool          // the list has nothing more below before
	below     bool          // reading below the floor
	sources   []*pullSource // own timelines read at read time
	followees []string      // whom the reader follows, for below the floor
	pending   []homeItem    // candidates read, in order, not yet checked
	out       []*social.Post
	shown     stories        // the stories on the page
	window    *storyFold     // the fold window above the page (timeline_fold.go)
	filters   *viewerFilters // the viewer's, read with the first list round
	checked   int64          // the oldest candidate checked (0: none)
}

func (h *homePage) read(ctx context.Context) (social.Connection[*social.Post], error) {
	// The viewer's keyword filters ride in the list's round, so that the
	// first check knows them and reads reposts' originals' text with the
	// candidates (visibleWith).
	h.filters = newViewerFilters(ctx, h.viewer, true)
	list, err := h.s.firstListRound(ctx, h.viewer, func(p redis.Pipeliner, mayPull bool) *redis.Cmd {
		h.filters.queue(ctx, p, h.s.keys)
		return h.queueList(ctx, p, candidates(h.first, 0), mayPull)
	})
	if err != nil {
		return social.Connection[*social.Post]{}, err
	}
	h.filters.matcher(ctx, h.s.set.now())
	h.useList(list)
	h.window = newStoryFold(h.s.keys, h.s.set.posts, list)

	// Each round reads (when the candidates in hand may not fill the page)
	// and then checks only as many candidates as can still make the page,
	// newest first: a reader following many pulled authors pays one read
	// per author and the checks of one page, not a check of every
	// candidate every author offered.
	readAll := false // every source is read to its end: pending is the rest
	spent := false   // the operation's read budget ran out
	for round := 0; round < pageRounds && len(h.out) <= h.first; round++ {
		k := candidates(h.first-len(h.out), round)
		if !readAll && len(h.pending) < k {
			if readAll, spent, err = h.readMore(ctx, round, list); err != nil {
				return social.Connection[*social.Post]{}, err
			}
			if spent {
				break
			}
		}
		if len(h.pending) == 0 {
			if readAll {
				break
			}
			continue
		}
		if err := h.check(ctx, min(k, len(h.pending))); err != nil {
			return social.Connection[*social.Post]{}, err
		}
	}
	return h.page(readAll, spent), nil
}

// readMore reads a round's candidates: on round 0 those of the first list
// round (list), later one pipeline of the list and every open source.
// readAll says every source is read to its end; spent, that the
// operation's read budget ran out before anything was read.
func (h *homePage) readMore(ctx context.Context, round int, list *listRound) (readAll, spent bool, err error) {
	n := candidates(h.first, round)
	if round > 0 {
		list = nil
		// Later reads spend the operation's read budget, one candidate per
		// entry each open source may return, and read no more than it
		// granted.
		reads := h.openReads()
		got := social.TakeReadBudget(ctx, n*reads)
		if got == 0 {
			return false, true, nil
		}
		n = max(1, got/reads)
	}
	var cmd *redis.Cmd
	queued := false
	_, err = pipelined(ctx, h.s.rdb, func(p redis.Pipeliner) error {
		cmd, queued = nil, false
		if round > 0 && !h.below && !h.listDone {
			cmd, queued = h.queueList(ctx, p, n, false), true
		}
		if h.queueSources(ctx, p, n) > 0 {
			queued = true
		}
		if round == 0 {
			h.window.queuePulled(ctx, p, h.viewer, list.pulled, h.before, false)
		}
		if !queued {
			return errNothingQueued
		}
		return nil
	})
	if err != nil && err != errNothingQueued {
		return false, false, err
	}
	if round == 0 {
		h.window.takePulled()
	}
	if cmd != nil {
		if list, err = parseListRound(cmd); err != nil {
			return false, false, err
		}
		h.useList(list)
	}
	return h.take(list, n), false, nil
}

// page makes the page of the posts kept.
func (h *homePage) page(readAll, spent bool) social.Connection[*social.Post] {
	c := postPage(h.out, h.first, !readAll || len(h.pending) > 0)
	if spent && len(h.out) <= h.first {
		// Short: the next page goes on below the candidates checked, or,
		// when none was, from where the reads got (nothing read is in
		// hand unchecked: a round with candidates checks some).
		at := h.checked
		if at == 0 {
			at = h.before
		}
		if at != noCursor {
			c.HasNext, c.End = true, postCursor(strconv.FormatInt(at, 10))
		}
	}
	return c
}

// openReads is how many sources a read round after the first reads.
func (h *homePage) openReads() int { return openReads(h.below || h.listDone, h.sources) }

// queueSources queues the next read of every open source and returns how
// many it queued.
func (h *homePage) queueSources(ctx context.Context, p redis.Pipeliner, n int) int {
	lo := "-inf"
	if !h.below {
		lo = strconv.FormatInt(h.floor, 10)
	}
	queued := 0
	for _, src := range h.sources {
		src.cmd = nil
		if src.done {
			continue
		}
		src.cmd = queueAuthorWindow(ctx, p, h.s.keys, src.author, h.viewer, authorWindow{
			from: "(" + strconv.FormatInt(h.before, 10), to: lo, count: n, newestFirst: true,
		})
		queued++
	}
	return queued
}

// take adds the posts read in one round that are certainly next in the
// timeline (newer than the oldest post of any source that may hold more)
// to the candidates in hand, in order, and moves the read position below
// them. It reports whether every source is read to its end.
func (h *homePage) take(list *listRound, n int) bool {
	items := h.pending
	bound, more := int64(-1), false
	if list != nil && !h.below {
		items = append(items, list.entries...)
		if !list.exhausted && len(list.entries) > 0 {
			more, bound = true, list.entries[len(list.entries)-1].id
		}
	}
	items = takePulled(items, h.sources, n, func(last int64) {
		if !more || last > bound {
			more, bound = true, last
		}
	})
	slices.SortFunc(items, func(a, b homeItem) int { return cmp.Compare(b.id, a.id) })
	// Filtered in place: a post pulled and also in the list counts once.
	h.pending = items[:0]
	for _, it := range items {
		if (more && it.id < bound) || (len(h.pending) > 0 && it.id == h.pending[len(h.pending)-1].id) {
			continue
		}
		h.pending = append(h.pending, it)
	}
	switch {
	case more:
		h.before = bound
	case !h.below && h.floor > 0:
		// Everything at or above the floor is read: go on below it, in the
		// own timelines of everyone the reader follows.
		h.below = true
		h.before = min(h.before, h.floor)
		h.sources = make([]*pullSource, 0, len(h.followees)+1)
		for _, a := range append(h.followees, h.viewer) {
			h.sources = append(h.sources, &pullSource{author: a})
		}
	default:
		return true
	}
	return false
}

// check checks the k newest candidates in hand for the viewer, with what
// the page brings along on the first check, and adds the visible ones to
// the page.
func (h *homePage) check(ctx context.Context, k int) error {
	ids := make([]string, k)
	authors := make([]string, k)
	for i, it := range h.pending[:k] {
		ids[i], authors[i] = strconv.FormatInt(it.id, 10), it.author
	}
	h.checked = h.pending[k-1].id
	h.pending = h.pending[k:]
	posts, err := h.s.set.postReader(h.s.rdb, h.s.keys).visibleFolded(ctx, h.viewer, ids, authors, h.fetch.along(authors), h.window, h.filters)
	h.fetch = nil // extras for the first check only, as at readUserPosts
	if err != nil {
		return err
	}
	for _, p := range posts {
		if p != nil && !h.window.hides(p) && !h.shown.fold(p, h.first) {
			h.out = append(h.out, p)
		}
	}
	return nil
}

// HomePage returns a page of viewerID's home timeline with what w asks for.
func (s *TimelineService) HomePage(ctx context.Context, viewerID string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error) {
	f := s.newPageFetch(viewerID, w, p.First)
	c, err := s.readHome(ctx, viewerID, p, f)
	if err != nil {
		return nil, err
	}
	return f.finish(ctx, c)
}

// queueList queues homePageScript for one round.
func (h *homePage) queueList(ctx context.Context, p redis.Pipeliner, n int, mayPull bool) *redis.Cmd {
	s := h.s
	cursor := ""
	if h.before != noCursor {
		cursor = strconv.FormatInt(h.before, 10)
	}
	pull, first := "0", "0"
	if s.set.feed.Mode == Pull {
		pull = "1"
	}
	if mayPull && h.firstPage {
		first = "1"
	}
	window := 0
	if h.window == nil && cursor != "" {
		window = foldWindow // the page's first round (timeline_fold.go)
	}
	return homePageScript.EvalSha(ctx, p, homeKeys(s.keys, h.viewer),
		h.viewer, cursor, n, s.set.now().UnixMilli(), s.set.feed.activeEvery().Milliseconds(), pull, first, s.set.feed.homeTTL(), "0", window)
}

// useList takes in what a list read says about the sources.
func (h *homePage) useList(r *listRound) {
	h.floor = r.floor
	h.listDone = r.exhausted
	if h.sources == nil {
		h.sources = make([]*pullSource, 0, len(r.pulled))
		for _, a := range r.pulled {
			h.sources = append(h.sources, &pullSource{author: a})
		}
	}
	if r.followees != nil {
		h.followees = r.followees
	}
}
