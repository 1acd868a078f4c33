package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// userPosts is the state of reading one page of a user's own posts.
type userPosts struct {
	user      string
	first     int
	before    int64
	err       error
	done      bool        // blocked, or enough read, or nothing more to read
	blocked   bool        // a block stands either way: the page is empty
	exhausted bool        // the user has nothing more below before
	scanned   bool        // candidates were read
	goesOn    bool        // ended short among hidden posts, a public one below
	count     int         // candidates this round reads
	ids       *authorRead // the round's window of the user's posts
	blocks    [2]*redis.BoolCmd
	out       []*social.Post
}

// readUserPosts reads one page of each request's user's own posts, as
// viewerID may see them, newest first; f, when set, is what the pages bring
// along (timeline_fetch.go), queued with the visibility check of the candidates.
//
// The pages are read together, round by round: each round costs two round
// trips for all of them, the window below its cursor of each user still
// open, as the viewer may see it (queueAuthorWindow: the reader's index,
// postindex.go; on the first round with the viewer's block flags for the
// user, which end that page at once), then the visibility of all those
// posts. So a page never reads a post addressed only to others.
// Candidates from NotToPosts may list the viewer, and are screened
// (post_screen.go) before the check, one more round trip in a round that
// has any, so that a page reading past NOT_TO posts hidden from its viewer
// costs Redis little for each.
func (s *TimelineService) readUserPosts(ctx context.Context, viewerID string, reqs []readplan.UserPageKey, f *pageFetch) ([]social.Connection[*social.Post], []error) {
	pages := make([]*userPosts, len(reqs))
	for i, r := range reqs {
		before, err := timelineCursor(r.Page)
		pages[i] = &userPosts{user: r.User, first: r.Page.First, before: before, err: err, done: err != nil || !social.IsID(r.User)}
	}
	for round := 0; round < pageRounds; round++ {
		open := openUserPages(ctx, pages, round)
		if len(open) == 0 {
			break
		}
		if err := s.queueUserPosts(ctx, viewerID, open, round); err != nil {
			return nil, []error{err}
		}
		ids, authors, from, restricted := takeUserPosts(open)
		if len(ids) == 0 {
			break
		}
		var err error
		if ids, authors, from, err = s.screenRound(ctx, viewerID, ids, authors, from, restricted); err != nil {
			return nil, []error{err}
		}
		if err := s.keepVisible(ctx, viewerID, ids, authors, from, round, f); err != nil {
			return nil, []error{err}
		}
		for _, pg := range open {
			pg.done = pg.done || pg.exhausted || len(pg.out) > pg.first
		}
	}
	if err := s.publicBelow(ctx, viewerID, pages); err != nil {
		return nil, []error{err}
	}
	return userPostPages(pages)
}

// publicBelow marks the pages that ended short among posts hidden from
// their viewer (NOT_TO posts listing them, or deleted: the rounds or the
// read budget ran out) and whose user has a post below where they stopped
// that the viewer's audience sets hold for sure: a public one, or an
// ONLY_TO one listing the viewer. Only those go on (HasNext, an End
// cursor where they stopped): a post the viewer may see lies ahead. The
// others end there, as an anonymous reader's page ends after the last
// public post, so that neither HasNext nor a cursor tells a viewer of
// posts hidden from them. One round trip, only when a page ended short.
func (s *TimelineService) publicBelow(ctx context.Context, viewerID string, pages []*userPosts) error {
	var short []*userPosts
	for _, pg := range pages {
		if pg.err == nil && !pg.blocked && pg.scanned && !pg.exhausted && len(pg.out) <= pg.first {
			short = append(short, pg)
		}
	}
	if len(short) == 0 {
		return nil
	}
	below := make([][2]*redis.StringSliceCmd, len(short))
	_, err := s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for i, pg := range short {
			window := &redis.ZRangeBy{Max: "(" + strconv.FormatInt(pg.before, 10), Min: "-inf", Count: 1}
			below[i][0] = pl.ZRevRangeByScore(ctx, s.keys.PublicPosts(pg.user), window)
			if viewerID != "" {
				below[i][1] = pl.ZRevRangeByScore(ctx, s.keys.OnlyToPosts(pg.user, viewerID), window)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("look for visible posts below %d short pages: %w", len(short), err)
	}
	for i, pg := range short {
		pg.goesOn = len(below[i][0].Val()) > 0 || (below[i][1] != nil && len(below[i][1].Val()) > 0)
	}
	return nil
}

// openUserPages returns the pages that read in this round, with the
// candidates each reads: the first read of a page is what its size asks
// for; later ones spend the operation's read budget.
func openUserPages(ctx context.Context, pages []*userPosts, round int) []*userPosts {
	open := pages[:0:0]
	for _, pg := range pages {
		if pg.done {
			continue
		}
		if pg.count = candidates(pg.first, round); round > 0 {
			if pg.count = social.TakeReadBudget(ctx, pg.count); pg.count == 0 {
				pg.done = true
				continue
			}
		}
		open = append(open, pg)
	}
	return open
}

// queueUserPosts reads the round's candidates of the open pages in one
// pipeline, with the viewer's block flags on the first round. Each comes
// from the viewer's part of the reader's index (queueAuthorWindow): no
// page scans posts addressed only to others.
func (s *TimelineService) queueUserPosts(ctx context.Context, viewerID string, open []*userPosts, round int) error {
	_, err := pipelined(ctx, s.rdb, func(pl redis.Pipeliner) error {
		for _, pg := range open {
			window := authorWindow{from: "(" + strconv.FormatInt(pg.before, 10), to: "-inf", count: pg.count, newestFirst: true}
			pg.ids = queueAuthorWindow(ctx, pl, s.keys, pg.user, viewerID, window)
			other := viewerID != "" && viewerID != pg.user // a signed-in viewer, not the author
			if round == 0 && other {
				pg.blocks = [2]*redis.BoolCmd{
					pl.SIsMember(ctx, s.keys.Blocks(viewerID), pg.user),
					pl.SIsMember(ctx, s.keys.BlockedBy(viewerID), pg.user),
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("load posts of %d users: %w", len(open), err)
	}
	return nil
}

// takeUserPosts collects the candidates the round read, with their
// authors and pages and whether each is to be screened (came from
// NotToPosts), and moves each page's cursor past them.
func takeUserPosts(open []*userPosts) (ids, authors []string, from []*userPosts, restricted []bool) {
	for _, pg := range open {
		if b := pg.blocks; b[0] != nil && (b[0].Val() || b[1].Val()) {
			pg.done, pg.blocked = true, true
			continue
		}
		pg.blocks = [2]*redis.BoolCmd{}
		read := pg.ids.Val()
		pg.exhausted = len(read) < pg.count
		if len(read) == 0 {
			pg.done = true
			continue
		}
		var notTo map[string]bool
		if not := pg.ids.NotTo(); len(not) > 0 {
			notTo = make(map[string]bool, len(not))
			for _, id := range not {
				notTo[id] = true
			}
		}
		for _, id := range read {
			ids, authors, from = append(ids, id), append(authors, pg.user), append(from, pg)
			restricted = append(restricted, notTo[id])
		}
		pg.before, _ = strconv.ParseInt(read[len(read)-1], 10, 64)
		pg.scanned = true
	}
	return ids, authors, from, restricted
}

// keepVisible adds to their pages the candidates of a round that viewerID
// may see. Pages of one user with different sizes or cursors (aliases of
// one field) overlap: each post is checked once. Extras (f) only for the
// first round's candidates: a page whose candidates are mostly hidden must
// not pay them for every post it reads; stage 3 fills in what later
// rounds' posts lack.
func (s *TimelineService) keepVisible(ctx context.Context, viewerID string, ids, authors []string, from []*userPosts, round int, f *pageFetch) error {
	if len(ids) == 0 {
		return nil
	}
	if round > 0 {
		f = nil
	}
	uniq, uniqAuthors, at := distinct(ids, authors)
	posts, err := s.set.postReader(s.rdb, s.keys).visibleIn(ctx, social.FilterPublic, viewerID, uniq, uniqAuthors, f.along(uniqAuthors))
	if err != nil {
		return err
	}
	for i, pg := range from {
		if post := posts[at[i]]; post != nil {
			pg.out = append(pg.out, post)
		}
	}
	return nil
}

// screenRound keeps the candidates of a round that pass screen: those
// with an audience are screened, each post once; the others go on.
func (s *TimelineService) screenRound(ctx context.Context, viewerID string, ids, authors []string, from []*userPosts, restricted []bool) ([]string, []string, []*userPosts, error) {
	var todo []string
	for i, r := range restricted {
		if r {
			todo = append(todo, ids[i])
		}
	}
	if len(todo) == 0 {
		return ids, authors, from, nil
	}
	uniq, _, _ := distinct(todo, nil)
	keep, err := s.screen(ctx, viewerID, uniq)
	if err != nil {
		return nil, nil, nil, err
	}
	kept := make(map[string]bool, len(keep))
	for _, i := range keep {
		kept[uniq[i]] = true
	}
	n := 0
	for i := range ids {
		if !restricted[i] || kept[ids[i]] {
			ids[n], authors[n], from[n] = ids[i], authors[i], from[i]
			n++
		}
	}
	return ids[:n], authors[:n], from[:n], nil
}

// distinct returns ids without repeats, in order, with the author of each
// (when authors is not nil), and where each of ids went.
func distinct(ids, authors []string) (uniq, uniqAuthors []string, at []int) {
	at = make([]int, len(ids))
	seen := make(map[string]int, len(ids))
	for i, id := range ids {
		j, ok := seen[id]
		if !ok {
			j = len(uniq)
			seen[id] = j
			uniq = append(uniq, id)
			if authors != nil {
				uniqAuthors = append(uniqAuthors, authors[i])
			}
		}
		at[i] = j
	}
	return uniq, uniqAuthors, at
}

// userPostPages makes the pages of what the rounds kept.
func userPostPages(pages []*userPosts) ([]social.Connection[*social.Post], []error) {
	out := make([]social.Connection[*social.Post], len(pages))
	errs := make([]error, len(pages))
	for i, pg := range pages {
		if pg.err != nil {
			errs[i] = pg.err
			continue
		}
		if !pg.blocked {
			// HasNext only for a visible post read past the page, or a
			// public one below where a short page stopped (publicBelow):
			// never for hidden posts alone.
			out[i] = postPage(pg.out, pg.first, false)
			if pg.goesOn {
				// The End cursor is sealed (social.EncodeCursor): it
				// names where the page stopped without showing it.
				out[i].HasNext, out[i].End = true, postCursor(strconv.FormatInt(pg.before, 10))
			}
		}
	}
	return out, errs
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
