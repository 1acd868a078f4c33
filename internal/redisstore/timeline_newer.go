package redisstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// Newer pages of the home timeline: timeline(before:).
//
// A client back from a sleep asks for the posts newer than the newest it
// has, nearest to it first, in pages, until none is left (as Mastodon's
// min_id). The reader is readHome's, walking up instead of down: the same
// three sources, merged by id, checked in rounds of candidates for the
// viewer, but read upwards from the cursor (the home list from the
// cursor's place towards its head, the own timelines by ascending score),
// and below the floor first, where the list is not complete:
//   - ids in (cursor, floor): the own timelines of everyone the reader
//     follows, and the reader's own;
//   - ids >= floor: the list (homePageScript in its newer mode) and the
//     own timelines of the pulled authors.
//
// The page is the first posts visible above the cursor, returned newest
// first like every page; HasPrevious says whether candidates remain above
// it (some may turn out hidden). Its cursors are the posts' own, so a
// client goes on with before: its StartCursor, and pages stay adjacent
// while others post.

// newerPage is the state of reading one newer page.
type newerPage struct {
	s          *TimelineService
	viewer     string
	first      int
	after      int64 // everything up to here was read: the next round reads above it
	fetch      *pageFetch
	shown      stories
	floor      int64         // the list's floor, as its latest read says
	follows    []string      // whom the reader follows, read below the floor
	below      bool          // reading (after, floor) from the followees' timelines
	listEnd    bool          // the list has nothing more above after
	sources    []*pullSource // own timelines read at read time
	pulled     []string      // authors pulled above the floor
	pending    []homeItem    // candidates read, ascending, not yet checked
	checked    int64         // the newest candidate checked (0: none)
	out        []*social.Post
	window     *storyFold // the fold window above the cursor (timeline_fold.go)
	start      int64      // the cursor
	pulledRead bool       // the pulled authors' posts above the cursor are read
}

func (s *TimelineService) readNewer(ctx context.Context, viewerID string, p social.PageRequest, f *pageFetch) (social.Connection[*social.Post], error) {
	after, err := parseCursor(p.Before)
	if err != nil {
		return social.Connection[*social.Post]{}, err
	}
	n := &newerPage{s: s, viewer: viewerID, first: p.First, after: after, start: after, fetch: f}
	c, err := n.read(ctx)
	if err != nil {
		return c, fmt.Errorf("newer home timeline of %s: %w", viewerID, err)
	}
	return c, nil
}

func (n *newerPage) read(ctx context.Context) (social.Connection[*social.Post], error) {
	// The first list read fills the list first when it must (as readHome),
	// and says where the floor is and whom the reader follows.
	list, err := n.s.firstListRound(ctx, n.viewer, func(p redis.Pipeliner, mayPull bool) *redis.Cmd {
		return n.queueList(ctx, p, 0, mayPull)
	})
	if err != nil {
		return social.Connection[*social.Post]{}, err
	}
	n.floor, n.pulled, n.follows = list.floor, list.pulled, list.followees
	n.window = newStoryFold(n.s.keys, n.s.set.posts, list)
	n.below = n.after < n.floor-1
	n.open(n.follows)

	readAll, spent := false, false
	for round := 0; round < pageRounds && len(n.out) <= n.first; round++ {
		k := candidates(n.first-len(n.out), round)
		if !readAll && len(n.pending) < k {
			want := candidates(n.first, round)
			// Later reads spend the operation's read budget, as readHome's.
			if round > 0 {
				reads := n.openReads()
				got := social.TakeReadBudget(ctx, want*reads)
				if got == 0 {
					spent = true
					break
				}
				want = max(1, got/reads)
			}
			var err error
			if readAll, err = n.readRound(ctx, want); err != nil {
				return social.Connection[*social.Post]{}, err
			}
			if n.s.set.newerRound != nil {
				n.s.set.newerRound()
			}
		}
		if len(n.pending) == 0 {
			if readAll {
				break
			}
			continue
		}
		if err := n.check(ctx, min(k, len(n.pending))); err != nil {
			return social.Connection[*social.Post]{}, err
		}
	}
	more := len(n.out) > n.first || !readAll || len(n.pending) > 0
	posts := n.out[:min(len(n.out), n.first)]
	slices.Reverse(posts)
	c := postPage(posts, n.first, false)
	c.HasNext, c.HasPrevious = false, more
	if spent && len(n.out) <= n.first {
		// Short: the next page goes on above the candidates checked, or
		// from where the reads got when none was.
		at := n.checked
		if at == 0 {
			at = n.after
		}
		if at > 0 {
			c.HasPrevious, c.Start = true, postCursor(strconv.FormatInt(at, 10))
		}
	}
	return c, nil
}

// openReads is how many sources a read round reads.
func (n *newerPage) openReads() int { return openReads(n.below || n.listEnd, n.sources) }

// queueList queues homePageScript's newer read of up to k entries above
// the read position (at least the floor), or only its checks when k is 0.
func (n *newerPage) queueList(ctx context.Context, p redis.Pipeliner, k int, mayPull bool) *redis.Cmd {
	s := n.s
	pull, first := "0", "0"
	if s.set.feed.Mode == Pull {
		pull = "1"
	}
	if mayPull {
		first = "1" // a client catching up wants what pull mode has not pulled yet
	}
	from := max(n.after, n.floor-1)
	window := 0
	if n.window == nil {
		window = foldWindow // the page's first round (timeline_fold.go)
	}
	return homePageScript.EvalSha(ctx, p, homeKeys(s.keys, n.viewer),
		n.viewer, from, k, s.set.now().UnixMilli(), s.set.feed.activeEvery().Milliseconds(), pull, first, s.set.feed.homeTTL(), "1", window)
}

// open sets the timelines read at read time: below the floor, everyone
// the reader follows and the reader; above it, the pulled authors.
func (n *newerPage) open(followees []string) {
	authors := n.pulled
	if n.below {
		authors = append(slices.Clip(followees), n.viewer)
	}
	n.sources = make([]*pullSource, 0, len(authors))
	for _, a := range authors {
		n.sources = append(n.sources, &pullSource{author: a})
	}
}

// readRound reads up to k candidates from every open source, above the
// read position, and keeps those certainly next (below the newest read of
// any source that may hold more). It reports whether every source is read
// to its end.
func (n *newerPage) readRound(ctx context.Context, k int) (bool, error) {
	top := "+inf"
	if n.below {
		top = "(" + strconv.FormatInt(n.floor, 10)
	}
	var list *redis.Cmd
	_, err := pipelined(ctx, n.s.rdb, func(p redis.Pipeliner) error {
		if !n.below && !n.listEnd {
			list = n.queueList(ctx, p, k, false)
		}
		for _, src := range n.sources {
			src.cmd = nil
			if !src.done {
				src.cmd = queueAuthorWindow(ctx, p, n.s.keys, src.author, n.viewer, authorWindow{
					from: "(" + strconv.FormatInt(n.after, 10), to: top, count: k,
				})
			}
		}
		if !n.pulledRead {
			n.window.queuePulled(ctx, p, n.viewer, n.pulled, n.start, true)
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	if !n.pulledRead {
		n.window.takePulled()
		n.pulledRead = true
	}
	items, bound, more, err := n.collect(list, k)
	if err != nil {
		return false, err
	}
	slices.SortFunc(items, func(a, b homeItem) int { return cmp.Compare(a.id, b.id) })
	n.pending = items[:0]
	for _, it := range items {
		if (more && it.id > bound) || (len(n.pending) > 0 && it.id == n.pending[len(n.pending)-1].id) {
			continue
		}
		n.pending = append(n.pending, it)
	}
	switch {
	case more:
		n.after = bound
	case n.below:
		// Everything below the floor is read: go on above it, in the list
		// and the pulled authors' timelines.
		n.below = false
		n.after = max(n.after, n.floor-1)
		n.open(nil)
	default:
		return true, nil
	}
	return false, nil
}

// collect adds the candidates a round read (the list's reply, the open
// sources') to those in hand. more says a source may hold more, and bound
// is then the lowest newest-read id of such a source: the candidates above
// it are not certainly next.
func (n *newerPage) collect(list *redis.Cmd, k int) (items []homeItem, bound int64, more bool, err error) {
	items = n.pending
	limit := func(last int64) {
		if !more || last < bound {
			more, bound = true, last
		}
	}
	if list != nil {
		r, err := parseListRound(list)
		if err != nil {
			return nil, 0, false, err
		}
		if n.trimmed(r) {
			// What the list held in (after, floor) is gone from it: read
			// it from the followees' timelines first, this round's reads
			// set aside.
			for _, src := range n.sources {
				src.cmd = nil
			}
			n.open(n.follows)
			return items, n.after, true, nil
		}
		for _, it := range r.entries {
			if it.id >= n.floor {
				items = append(items, it)
			}
		}
		n.listEnd = r.exhausted
		if !r.exhausted && len(r.entries) > 0 {
			limit(r.entries[len(r.entries)-1].id)
		}
	}
	items = takePulled(items, n.sources, k, limit)
	return items, bound, more, nil
}

// trimmed notes a floor a list read reports above the one the page knew:
// the list was trimmed since. It reports whether entries not read yet
// went below the new floor, so the page reads them below it.
func (n *newerPage) trimmed(r *listRound) bool {
	if r.floor <= n.floor {
		return false
	}
	n.floor = r.floor
	if len(r.followees) > 0 {
		n.follows = r.followees
	}
	if n.after >= n.floor-1 {
		return false
	}
	n.below, n.listEnd = true, false
	return true
}

// check checks the k nearest candidates in hand for the viewer and adds
// the visible ones to the page, folding stories as readHome does.
func (n *newerPage) check(ctx context.Context, k int) error {
	ids := make([]string, k)
	authors := make([]string, k)
	for i, it := range n.pending[:k] {
		ids[i], authors[i] = strconv.FormatInt(it.id, 10), it.author
	}
	n.checked = n.pending[k-1].id
	n.pending = n.pending[k:]
	posts, err := n.s.set.postReader(n.s.rdb, n.s.keys).visibleFolded(ctx, n.viewer, ids, authors, n.fetch.along(authors), n.window, nil)
	n.fetch = nil
	if err != nil {
		return err
	}
	for _, p := range posts {
		if p != nil && !n.window.hides(p) && !n.shown.fold(p, 0) {
			n.out = append(n.out, p)
		}
	}
	return nil
}
