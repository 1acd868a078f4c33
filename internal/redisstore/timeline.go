package redisstore

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// TimelineService reads pages of posts: home timelines (HomePage), users'
// own posts (UserPage, UserPages), and the lists a page shows (ListPages,
// lists.go); graph.Posts' reads, live.Store's replays and the loaders'
// pages. Each kind of page is one file that holds its entry point and
// runs its rounds, calling down into shared pieces that never call back
// up into a page's file:
//
//   - timeline_home.go: home pages (HomePage, readHome), which merge the
//     home list with the pulled authors' own posts;
//   - timeline_newer.go: home pages newer than a cursor
//     (timeline(before:)), reached from readHome;
//   - timeline_user.go: users' own posts (UserPage, UserPages);
//   - lists.go: the lists below objects (ListPages: followers,
//     following, likers, comments, common following).
//
// The shared pieces: timeline.go (the cursors, the candidates a round
// reads, the page of posts kept); timeline_homelist.go (the home list:
// the page script's round and its reply, the rebuild of an expired list,
// the pulled sources, the folding of stories); post_read.go (the
// visibility check every candidate passes, with postcache.go);
// timeline_fetch.go (what a page brings along in the check's pipeline and
// one more: authors, counters, the viewer's marks, first comments), each
// read by its row reader in rows.go.
type TimelineService struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
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
