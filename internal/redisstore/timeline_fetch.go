package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Timeline pages with what the query wants along with them.
//
// A page costs a fixed number of round trips whatever its size:
//
//  1. the page's candidate ids (home: the list script, whose entries carry
//     each post's author; user timeline: the own-posts zset);
//  2. one pipeline: the visibility check of the candidates, one post view
//     each (post_view.go) that also brings the post's counters, the
//     viewer's marks and its first comments, and joined to it the posts'
//     authors;
//  3. one pipeline: what only stage 2 names — the authors of those
//     comments, the reposted originals (visibility, counters, likes) and
//     their authors (recorded in the repost as rauthor).
//
// Stage 2 reads for all candidates, a few more than the page shows (see
// candidates); stage 3 only for the posts on the page. Pages whose
// candidates are mostly hidden take further rounds of stages 1–2, and a
// hybrid or pull reader may pay the list fills described at readHome.

// pageFetch collects what a page brings along with its posts.
type pageFetch struct {
	s      *DB
	viewer string
	w      readplan.PageWants

	// Stage-2 replies by post id (or user id for users).
	views map[string]postView
	users map[string]*redis.SliceCmd
}

// newPageFetch starts the fetch of about posts posts' extras (a size hint:
// the maps are made that large once rather than grown as they fill).
func (s *TimelineService) newPageFetch(viewerID string, w readplan.PageWants, posts int) *pageFetch {
	if w.Comments > social.MaxFirst {
		w.Comments = social.MaxFirst
	}
	n := min(posts+posts/2, 4*social.MaxFirst) // candidates are a few more than the page
	return &pageFetch{
		s: s.DB, viewer: viewerID, w: w,
		views: make(map[string]postView, n),
		users: make(map[string]*redis.SliceCmd, n),
	}
}

// viewWants is what the page's post views bring along. One comment more
// than asked tells whether there is a next page.
func (f *pageFetch) viewWants() viewWants {
	w := viewWants{counts: f.w.Counts, marks: f.w.Marks}
	if f.w.Comments > 0 {
		w.comments = f.w.Comments + 1
	}
	return w
}

// queue joins stage 2 to the visibility check v of the candidates, whose
// views bring their extras; authors[i], when known, is the author of the
// i-th candidate.
func (f *pageFetch) queue(ctx context.Context, p redis.Pipeliner, v *visibility, authors []string) {
	for i, id := range v.ids {
		if !social.IsID(id) {
			continue
		}
		f.views[id] = v.views[i]
		if f.w.Authors && i < len(authors) {
			f.queueUser(ctx, p, authors[i])
		}
	}
}

func (f *pageFetch) queueUser(ctx context.Context, p redis.Pipeliner, id string) {
	if _, ok := f.users[id]; !ok && social.IsID(id) {
		f.users[id] = f.s.queueUser(ctx, p, id)
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
	f.read(page, c.Items)

	// Stage 3: everything named by stage 2, in one pipeline.
	orig := f.newOriginals(c.Items)
	cmds, err := f.s.pipelined(ctx, func(p redis.Pipeliner) error {
		before := len(f.users)
		late := f.queueLate(ctx, p, c.Items)
		f.queueAuthors(ctx, p, page, c.Items)
		orig.queue(ctx, p, f, c.Items)
		if len(f.users) == before && len(orig.ids) == 0 && late == 0 {
			return errNothingQueued
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil && err != errNothingQueued {
		return nil, fmt.Errorf("load page details: %w", err)
	}
	f.read(page, c.Items) // the late posts' replies
	for id, cmd := range f.users {
		page.Users[id] = userFromValues(id, cmd.Val())
	}
	orig.read(page)
	return page, nil
}

// queueLate queues the views of the posts from a later round of a page
// (most candidates hidden), which had no stage-2 extras (their comments'
// authors are then left to the loaders), when the page wants extras. It
// returns how many views it queued.
func (f *pageFetch) queueLate(ctx context.Context, p redis.Pipeliner, posts []*social.Post) int {
	w, late := f.viewWants(), 0
	if w == (viewWants{}) {
		return 0
	}
	for _, post := range posts {
		if _, ok := f.views[post.ID]; !ok {
			f.views[post.ID] = f.s.queuePostView(ctx, p, f.viewer, post.ID, w)
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
// viewer may see them, with their counters and the viewer's marks as w
// asks, and their authors.
type originals struct {
	ids []string
	v   *visibility
}

func (f *pageFetch) newOriginals(posts []*social.Post) *originals {
	o := &originals{}
	if f.w.Reposts {
		for _, post := range posts {
			if post.RepostOfID != "" {
				o.ids = append(o.ids, post.RepostOfID)
			}
		}
	}
	o.v = f.s.newVisibility(f.viewer, o.ids)
	o.v.want = viewWants{counts: f.w.OriginalCounts, marks: f.w.OriginalMarks}
	return o
}

func (o *originals) queue(ctx context.Context, p redis.Pipeliner, f *pageFetch, posts []*social.Post) {
	if len(o.ids) == 0 {
		return
	}
	o.v.queue(ctx, p)
	for _, post := range posts {
		if post.RepostOfID != "" && f.w.OriginalAuthors && post.RepostOfAuthorID != "" {
			f.queueUser(ctx, p, post.RepostOfAuthorID)
		}
	}
}

func (o *originals) read(page *readplan.Page) {
	for i, p := range o.v.posts() {
		page.Originals[o.ids[i]] = p
	}
	for i, id := range o.ids {
		if o.v.want.counts {
			page.Counts[id] = o.v.views[i].counts()
		}
		if o.v.want.marks {
			page.Marks[id] = o.v.views[i].marks()
		}
	}
}

// read moves the replies of posts' counters, likes and first comments that
// have been read (queued in a pipeline that ran) into the page, once per
// post: before stage 3 for stage 2's posts, after it for the late ones.
func (f *pageFetch) read(page *readplan.Page, posts []*social.Post) {
	w := f.w
	for _, post := range posts {
		v, ok := f.views[post.ID]
		if !ok || v.cmd == nil || v.cmd.Err() != nil {
			continue // not read yet (a late post before stage 3)
		}
		if w.Counts && !done(page.Counts, post.ID) {
			page.Counts[post.ID] = v.counts()
		}
		if w.Marks && !done(page.Marks, post.ID) {
			page.Marks[post.ID] = v.marks()
		}
		if w.Comments > 0 && !done(page.Comments, post.ID) {
			page.Comments[post.ID] = v.comments(post.ID, w.Comments)
		}
	}
}

func done[V any](m map[string]V, id string) bool { _, ok := m[id]; return ok }
