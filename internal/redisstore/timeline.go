package redisstore

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// TimelineService reads pages of posts: home timelines (HomePage), users'
// own posts (UserPage, UserPages), and the lists a page shows (ListPages,
// lists.go); graph.Posts' reads, live.Store's replays and the loaders'
// pages. The read path of a page, in the order it runs:
//
//   - timeline.go: the entry points, the cursors and the page rounds;
//   - timeline_home.go: the home reader (readHome), which merges the home
//     list with the pulled authors' own posts;
//   - timeline_homelist.go: the list rounds (the page script) and the
//     rebuild of an expired list (fillHome);
//   - timeline_newer.go: pages newer than a cursor (timeline(before:));
//   - timeline_user.go: users' own posts (readUserPosts);
//   - post_read.go: the visibility check every candidate passes;
//   - timeline_fetch.go: what a page brings along in the same pipeline
//     (authors, counters, the viewer's marks, first comments), each read
//     by its row reader in rows.go.
type TimelineService struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
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

// UserPage returns a page of userID's own posts, as viewerID may see them,
// with what w asks for.
func (s *TimelineService) UserPage(ctx context.Context, viewerID, userID string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error) {
	pages, errs := s.UserPages(ctx, viewerID, []readplan.UserPageKey{{User: userID, Page: p, Wants: w}})
	if len(pages) == 0 {
		return nil, errs[0]
	}
	return pages[0], errs[0]
}

// UserPages reads pages of several users' own posts at once, in the round
// trips of one page (readUserPosts): the lists of a query level that ask
// for User.posts. Pages that want different things are read one group
// after the other.
func (s *TimelineService) UserPages(ctx context.Context, viewerID string, keys []readplan.UserPageKey) ([]*readplan.Page, []error) {
	out := make([]*readplan.Page, len(keys))
	errs := make([]error, len(keys))
	groups := map[readplan.PageWants][]int{}
	var order []readplan.PageWants
	for i, k := range keys {
		if _, ok := groups[k.Wants]; !ok {
			order = append(order, k.Wants)
		}
		groups[k.Wants] = append(groups[k.Wants], i)
	}
	for _, w := range order {
		at := groups[w]
		reqs := make([]readplan.UserPageKey, len(at))
		posts := 0
		for j, i := range at {
			reqs[j] = keys[i]
			posts += keys[i].Page.First
		}
		f := s.newPageFetch(viewerID, w, posts)
		conns, cerrs := s.readUserPosts(ctx, viewerID, reqs, f)
		if len(conns) == 0 {
			return nil, cerrs
		}
		// One stage 3 for all the pages: the page maps are keyed by post
		// and user id, so the pages share them.
		var all social.Connection[*social.Post]
		for _, c := range conns {
			all.Items = append(all.Items, c.Items...)
		}
		shared, err := f.finish(ctx, all)
		if err != nil {
			return nil, []error{err}
		}
		for j, i := range at {
			if errs[i] = cerrs[j]; errs[i] == nil {
				pg := *shared
				pg.Posts = conns[j]
				out[i] = &pg
			}
		}
	}
	return out, errs
}

// ForgetHome drops u's home list and mark, as their expiry does in hybrid
// mode INACTIVE_DAYS after u's last read: fan-out then skips u, and u's
// next read rebuilds the list. For seeding data sets with inactive users,
// and for tests; nothing else needs it, as Redis expires the keys.
func (s *TimelineService) ForgetHome(ctx context.Context, u string) error {
	if err := s.rdb.Del(ctx, s.keys.Home(u), s.keys.HomeMark(u)).Err(); err != nil {
		return fmt.Errorf("forget home timeline of %s: %w", u, err)
	}
	return nil
}

// Timeline cursors are the id of the last post shown; the next page is the
// posts with a smaller id. Ids only grow, so posts arriving while a reader
// pages land before the first page, never between pages: no duplicates and
// no skipped older posts.

// noCursor is the position before every post.
const noCursor = math.MaxInt64

// timelineCursor validates a page request and returns the id its cursor
// points at (noCursor for the first page).
func timelineCursor(p social.PageRequest) (int64, error) {
	if err := social.ValidateFirst(p.First); err != nil {
		return 0, err
	}
	if p.After == "" {
		return noCursor, nil
	}
	return parseCursor(p.After)
}

// parseCursor reads a timeline cursor: the id of the post it is at.
func parseCursor(c string) (int64, error) {
	parts, err := social.DecodeCursor(c, 1)
	if err != nil {
		return 0, err
	}
	if !social.IsID(parts[0]) {
		return 0, social.Errorf(social.BadUserInput, "malformed cursor")
	}
	n, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return 0, social.Errorf(social.BadUserInput, "malformed cursor")
	}
	return n, nil
}

// postCursor is the cursor of a post in any timeline.
func postCursor(id string) string { return social.EncodeCursor(id) }

// Reading a page drops what the viewer may not see, so a page reads more
// candidates than it shows, and reads again (from where it stopped) until
// the page is full or the source runs out: pages are full and HasNext is
// exact. The rounds are bounded, and rounds after the first spend the
// operation's read budget (social.TakeReadBudget): a page whose
// candidates are nearly all hidden from the viewer ends early, short or
// empty. A home page then sets HasNext and an End cursor at the last
// candidate read, so the client goes on from there; a page of a user's
// posts ends for good (HasNext false), as its cursor and HasNext may tell
// only of posts the viewer may see (timeline_user.go).
const (
	pageRounds   = 6
	maxCandidate = 1000
)

// candidates is how many entries a round reads for a page of first posts
// (one more than first tells HasNext), growing from round to round.
func candidates(first, round int) int {
	n := (first + 1 + first/4 + 2) << round
	return min(n, maxCandidate)
}

// postPage makes a page of up to first posts. HasNext is true when a
// further post was read, or when the source may hold more.
func postPage(posts []*social.Post, first int, more bool) social.Connection[*social.Post] {
	c := social.Connection[*social.Post]{HasNext: len(posts) > first || (more && len(posts) > 0)}
	posts = posts[:min(len(posts), first)]
	c.Items = posts
	c.Cursors = make([]string, len(posts))
	for i, p := range posts {
		c.Cursors[i] = postCursor(p.ID)
	}
	return c
}
