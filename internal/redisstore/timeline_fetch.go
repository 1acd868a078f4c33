package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/rcache"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Timeline pages with what the query wants along with them.
//
// A page costs a fixed number of round trips whatever its size:
//
//  1. the page's candidate ids (home: the list script, whose entries carry
//     each post's author; user timeline: the own-posts zset);
//  2. one pipeline: the visibility check of the candidates, whose HMGET of
//     each post's hash also brings its counters and its newest comments
//     (cm), and whose HGET of the viewer's flags (PostViewers) also brings
//     the viewer's marks, and joined to it the posts' authors (and the
//     first comments, commentRowsScript, when the page asks for more
//     than cm packs);
//  3. one pipeline: what only stage 2 names — the authors of those
//     comments, the reposted originals (visibility, counters, marks) and
//     their authors (recorded in the repost as rauthor); and what the
//     hashes of posts written before they held it lack: the counters
//     (postCountersScript sets them) and the first comments
//     (commentRowsScript, which sets cm; the authors of those comments
//     are left to the loaders).
//
// Stage 2 reads for all candidates, a few more than the page shows (see
// candidates); stage 3 only for the posts on the page. Pages whose
// candidates are mostly hidden take further rounds of stages 1–2, and a
// hybrid or pull reader may pay the list fills described at readHome.

// pageFetch collects what a page brings along with its posts.
type pageFetch struct {
	posts    postReader
	profiles *rcache.Cache[social.User] // nil: off
	viewer   string
	w        readplan.PageWants

	// Stage-2 replies by post id (or user id for users); counts are those
	// read in stage 3, checked the candidates' hashes with their counters.
	checked  map[string]checkedPost
	counts   map[string]countCmds
	marks    map[string]markCmds
	comments map[string]*redis.Cmd
	users    map[string]userRead
	// seen is a visibility check the fetch joined, which knows the
	// viewer's blocks; blocks, their read when none did (queueLate).
	seen   *visibility
	blocks *visibility
	// filters are the viewer's, read with the first check: the first
	// comments leave out what they hide in COMMENTS.
	filters *viewerFilters
	// queuedUsers counts the reads of users that went to Redis (the
	// others the profile cache served).
	queuedUsers int
}

// newPageFetch starts the fetch of about posts posts' extras (a size hint:
// the maps are made that large once rather than grown as they fill).
func (s *TimelineService) newPageFetch(viewerID string, w readplan.PageWants, posts int) *pageFetch {
	if w.Comments > social.MaxFirst {
		w.Comments = social.MaxFirst
	}
	n := min(posts+posts/2, 4*social.MaxFirst) // candidates are a few more than the page
	return &pageFetch{
		posts: s.set.postReader(s.rdb, s.keys), profiles: s.set.profiles, viewer: viewerID, w: w,
		checked:  make(map[string]checkedPost, n),
		counts:   make(map[string]countCmds),
		marks:    make(map[string]markCmds, n),
		comments: make(map[string]*redis.Cmd, n),
		users:    make(map[string]userRead, n),
	}
}

// along is what a visibility check of a page's candidates queues for f
// in its pipeline, authors[i], when known, being the author of the i-th
// (queue); nil for a nil f, a check without extras.
func (f *pageFetch) along(authors []string) func(context.Context, redis.Pipeliner, *visibility) {
	if f == nil {
		return nil
	}
	return func(ctx context.Context, p redis.Pipeliner, v *visibility) { f.queue(ctx, p, v, authors) }
}

// checkedPost is a candidate of a visibility check: its hash holds the
// post's counters.
type checkedPost struct {
	v *visibility
	i int
}

// queue joins stage 2 to the visibility check v of the candidates;
// authors[i], when known, is the author of the i-th.
func (f *pageFetch) queue(ctx context.Context, p redis.Pipeliner, v *visibility, authors []string) {
	w := f.w
	if f.filters == nil {
		f.filters = v.filters
	}
	for i, id := range v.ids {
		if !social.IsID(id) {
			continue
		}
		f.checked[id] = checkedPost{v, i}
		f.seen = v
		if w.Comments >= packedComments {
			// More than the hash packs (one more than asked tells
			// whether there is a next page).
			f.comments[id] = queueCommentRows(ctx, p, f.posts.keys, id, w.Comments+1, "", false)
		}
		if w.Authors && i < len(authors) {
			f.queueUser(ctx, p, authors[i])
		}
	}
}

func (f *pageFetch) queueUser(ctx context.Context, p redis.Pipeliner, id string) {
	if _, ok := f.users[id]; !ok && social.IsID(id) {
		r := queueUser(ctx, p, f.posts.keys, f.profiles, id)
		f.users[id] = r
		if r.queued() {
			f.queuedUsers++
		}
	}
}

// finish reads stage 2's replies for the posts of the page and runs stage 3.
func (f *pageFetch) finish(ctx context.Context, c social.Connection[*social.Post]) (*readplan.Page, error) {
	n := len(c.Items)
	page := &readplan.Page{
		Posts:     c,
		Users:     make(map[string]*social.User, len(f.users)+n),
		Counts:    make(map[string]social.PostCounts, n),
		Marks:     make(map[string]social.Marks, n),
		Comments:  make(map[string]social.Connection[*social.Comment], n),
		Originals: map[string]*social.Post{},
	}
	// The replies stage 2 already has (stage 3 needs the comments' authors).
	if err := f.read(page, c.Items); err != nil {
		return nil, err
	}

	// Stage 3: everything named by stage 2, in one pipeline.
	orig := f.newOriginals(c.Items)
	cmds, err := pipelined(ctx, f.posts.rdb, func(p redis.Pipeliner) error {
		before := f.queuedUsers
		late := f.queueLate(ctx, p, page, c.Items)
		f.queueAuthors(ctx, p, page, c.Items)
		orig.queue(ctx, p, f, c.Items)
		if f.queuedUsers == before && len(orig.ids) == 0 && late == 0 {
			return errNothingQueued
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil && err != errNothingQueued {
		return nil, fmt.Errorf("load page details: %w", err)
	}
	if err := orig.v.settle(ctx); err != nil {
		return nil, err
	}
	if err := f.read(page, c.Items); err != nil { // the late posts' replies
		return nil, err
	}
	for id, r := range f.users {
		page.Users[id] = r.user()
	}
	orig.read(page)
	return page, nil
}

// queueLate queues what stage 2's hashes lacked (older posts): the
// counters and the first comments (their authors are then left to the
// loaders); and the marks of posts no visibility check of the page read.
// It returns how many reads it queued.
func (f *pageFetch) queueLate(ctx context.Context, p redis.Pipeliner, page *readplan.Page, posts []*social.Post) int {
	w, late := f.w, 0
	if w.Comments > 0 && f.seen == nil && f.blocks == nil && f.viewer != "" {
		// The comments' authors are screened against the viewer's blocks.
		f.blocks = &visibility{viewer: f.viewer, blocks: p.SUnion(ctx, f.posts.keys.Blocks(f.viewer), f.posts.keys.BlockedBy(f.viewer))}
		late++
	}
	for _, post := range posts {
		if _, ok := f.counts[post.ID]; w.Counts && !ok && !done(page.Counts, post.ID) {
			f.counts[post.ID] = queueCounts(ctx, p, f.posts.keys, post.ID)
			late++
		}
		if _, ok := f.marks[post.ID]; w.Marks && !ok && !done(page.Marks, post.ID) {
			f.marks[post.ID] = queueMarks(ctx, p, f.posts.keys, f.viewer, post.ID)
			late++
		}
		if _, ok := f.comments[post.ID]; w.Comments > 0 && !ok && !done(page.Comments, post.ID) {
			// One more than asked tells whether there is a next page.
			f.comments[post.ID] = queueCommentRows(ctx, p, f.posts.keys, post.ID, w.Comments+1, "", true)
			late++
		}
	}
	return late
}

// queueAuthors queues the users the page shows: the posts' authors and
// their first comments' authors, as w asks.
func (f *pageFetch) queueAuthors(ctx context.Context, p redis.Pipeliner, page *readplan.Page, posts []*social.Post) {
	if f.w.Authors {
		for _, post := range posts {
			f.queueUser(ctx, p, post.AuthorID)
		}
	}
	if f.w.CommentAuthors {
		for _, cc := range page.Comments {
			for _, cm := range cc.Items {
				f.queueUser(ctx, p, cm.AuthorID)
			}
		}
	}
}

// originals is stage 3's read of the reposts' originals: the posts as the
// viewer may see them, and their authors, counters and the viewer's marks
// as w asks.
type originals struct {
	ids     []string
	authors []string // the originals' authors as the reposts record them ("" when not)
	v       *visibility
	counts  map[string]countCmds
	marks   bool
}

func (f *pageFetch) newOriginals(posts []*social.Post) *originals {
	o := &originals{counts: map[string]countCmds{}, marks: f.w.OriginalMarks}
	if f.w.Reposts {
		for _, post := range posts {
			if post.RepostOfID != "" {
				o.ids, o.authors = append(o.ids, post.RepostOfID), append(o.authors, post.RepostOfAuthorID)
			}
		}
	}
	o.v = f.posts.newVisibility(f.viewer, o.ids).withAuthors(o.authors)
	return o
}

func (o *originals) queue(ctx context.Context, p redis.Pipeliner, f *pageFetch, posts []*social.Post) {
	if len(o.ids) == 0 {
		return
	}
	o.v.queue(ctx, p)
	w := f.w
	for _, post := range posts {
		if post.RepostOfID == "" {
			continue
		}
		if w.OriginalAuthors && post.RepostOfAuthorID != "" {
			f.queueUser(ctx, p, post.RepostOfAuthorID)
		}
		if w.OriginalCounts {
			o.counts[post.RepostOfID] = queueCounts(ctx, p, f.posts.keys, post.RepostOfID)
		}
	}
}

func (o *originals) read(page *readplan.Page) {
	for i, p := range o.v.posts() {
		page.Originals[o.ids[i]] = p
		if o.marks {
			page.Marks[o.ids[i]] = o.v.marks(i)
		}
	}
	for id, cmd := range o.counts {
		page.Counts[id] = cmd.counts()
	}
}

// read moves the replies of posts' counters, likes and first comments that
// have been read (queued in a pipeline that ran) into the page, once per
// post: before stage 3 for stage 2's posts, after it for the late ones.
func (f *pageFetch) read(page *readplan.Page, posts []*social.Post) error {
	w := f.w
	for _, post := range posts {
		if w.Counts && !done(page.Counts, post.ID) {
			f.readCounts(page, post.ID)
		}
		if w.Marks && !done(page.Marks, post.ID) {
			f.readMarks(page, post.ID)
		}
		if w.Comments > 0 && !done(page.Comments, post.ID) {
			if err := f.readComments(page, post.ID); err != nil {
				return err
			}
		}
	}
	return nil
}

// readMarks moves the viewer's marks of a post into the page: from its
// visibility check, else from stage 3's read.
func (f *pageFetch) readMarks(page *readplan.Page, id string) {
	if c, ok := f.checked[id]; ok {
		page.Marks[id] = c.v.marks(c.i)
	} else if c, ok := f.marks[id]; ok {
		page.Marks[id] = c.marks()
	}
}

// readComments moves the first comments of a post into the page: from its
// hash when that tells (cm), else from stage 3's commentRowsScript; those
// of users on either side of a block with the viewer left out, and those
// the viewer's filters hide (filteredFirstComments), or not at all when
// that leaves the page short.
func (f *pageFetch) readComments(page *readplan.Page, id string) error {
	var cc social.Connection[*social.Comment]
	if c, ok := f.comments[id]; ok {
		var err error
		if cc, err = commentsFromReply(id, f.w.Comments, c); err != nil {
			return fmt.Errorf("first comments of post %s: %w", id, err)
		}
	} else if c, ok := f.checked[id]; ok {
		if cc, ok = c.v.comments(c.i, f.w.Comments); !ok {
			return nil
		}
	} else {
		return nil
	}
	cc = social.WithoutCommentsOf(cc, f.hiddenAuthor())
	var m *social.Matcher
	if f.filters != nil {
		m = f.filters.m // compiled by the check (visibleIn)
	}
	if cc, ok := filteredFirstComments(m, f.viewer, cc); ok {
		page.Comments[id] = cc
	}
	return nil
}

// hiddenAuthor is the viewer's block test (nil for an anonymous viewer):
// from a visibility check the fetch joined, else from queueLate's read.
func (f *pageFetch) hiddenAuthor() func(string) bool {
	switch {
	case f.viewer == "":
		return nil
	case f.seen != nil:
		return f.seen.hidden
	case f.blocks != nil:
		return f.blocks.hidden
	}
	return nil
}

// readCounts moves a post's counters into the page: from stage 3's read
// when there is one, else from its hash when that held them.
func (f *pageFetch) readCounts(page *readplan.Page, id string) {
	if c, ok := f.counts[id]; ok {
		page.Counts[id] = c.counts()
	} else if c, ok := f.checked[id]; ok {
		if pc, ok := c.v.counts(c.i); ok {
			page.Counts[id] = pc
		}
	}
}

func done[V any](m map[string]V, id string) bool { _, ok := m[id]; return ok }
