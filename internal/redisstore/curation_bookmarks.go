package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Bookmarks: Bookmarks (the user's slot) lists them, PostBookmarkers and
// the b flag of PostViewers (the post's slot) mirror them. Two slots, so
// two steps, ordered so that PostBookmarkers always holds everyone whose
// Bookmarks holds the post (the delete job cleans through it): a bookmark
// writes the post's side first, an unbookmark the user's side first. A
// crash between them leaves the flag set without the entry (the post
// reads bookmarked, the bookmarks page does not show it) until the call
// is repeated.

// Bookmark bookmarks a post viewerID may see (NOT_FOUND otherwise).
// Idempotent: a repeat keeps the first bookmark's place.
func (s *CurationService) Bookmark(ctx context.Context, viewerID, postID string) error {
	if err := s.mustSee(ctx, viewerID, postID); err != nil {
		return err
	}
	k := s.keys
	// The check above built PostViewers of an older post (pv), which the
	// script requires: -1 only if that raced with a write that lost it.
	n, err := bookmarkScript.Run(ctx, s.rdb, []string{k.Post(postID), k.PostViewers(postID), k.PostBookmarkers(postID)}, viewerID, "on").Int()
	if err != nil {
		return fmt.Errorf("bookmark post %s: %w", postID, err)
	}
	if n != 1 {
		return social.Errorf(social.NotFound, "post %s not found", postID)
	}
	ms := s.now().UnixMilli()
	if err := s.rdb.ZAddNX(ctx, k.Bookmarks(viewerID), redis.Z{Score: float64(ms), Member: postID}).Err(); err != nil {
		return fmt.Errorf("bookmark post %s: %w", postID, err)
	}
	return nil
}

// Unbookmark removes a bookmark; idempotent, and allowed on a post the
// viewer may no longer see (or that is gone).
func (s *CurationService) Unbookmark(ctx context.Context, viewerID, postID string) error {
	if !social.IsID(postID) {
		return social.Errorf(social.NotFound, "post %s not found", postID)
	}
	k := s.keys
	if err := s.rdb.ZRem(ctx, k.Bookmarks(viewerID), postID).Err(); err != nil {
		return fmt.Errorf("unbookmark post %s: %w", postID, err)
	}
	if err := bookmarkScript.Run(ctx, s.rdb, []string{k.Post(postID), k.PostViewers(postID), k.PostBookmarkers(postID)}, viewerID, "off").Err(); err != nil {
		return fmt.Errorf("unbookmark post %s: %w", postID, err)
	}
	return nil
}

// mustSee answers NOT_FOUND unless viewerID may see postID.
func (s *CurationService) mustSee(ctx context.Context, viewerID, postID string) error {
	posts, err := s.posts().visiblePosts(ctx, viewerID, []string{postID}, nil, nil)
	if err != nil {
		return err
	}
	if posts[0] == nil {
		return social.Errorf(social.NotFound, "post %s not found", postID)
	}
	return nil
}

// BookmarksPage returns a page of viewerID's bookmarks, most recently
// bookmarked first, with what w asks for; the posts the viewer may no
// longer see are left out. A cursor is a bookmark's (time, post id), so
// pages stay stable while bookmarks come and go. Round trips: the page of
// Bookmarks, then the posts' check with what they bring, then stage 3 of
// the page fetch; more rounds only when hidden posts leave it short.
func (s *CurationService) BookmarksPage(ctx context.Context, viewerID string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error) {
	pos, err := edgeCursor(p)
	if err != nil {
		return nil, err
	}
	src := &bookmarkSource{s: s, key: s.keys.Bookmarks(viewerID), pos: pos}
	return s.readPage(ctx, 0, viewerID, p.First, w, src)
}

// bookmarkSource reads Bookmarks from a position, round by round.
type bookmarkSource struct {
	s   *CurationService
	key string
	pos edgePos
}

func (b *bookmarkSource) next(ctx context.Context, n int) (ids, authors, cursors []string, exhausted bool, err error) {
	_, edges, err := parseEdgePage(edgePageScript.Run(ctx, b.s.rdb, []string{b.key}, b.pos.score, b.pos.member, n))
	if err != nil {
		return nil, nil, nil, false, fmt.Errorf("read bookmarks: %w", err)
	}
	for _, e := range edges {
		ids = append(ids, e.member)
		cursors = append(cursors, social.EncodeCursor(e.score, e.member))
	}
	if len(edges) > 0 {
		b.pos = edgePos(edges[len(edges)-1])
	}
	return ids, nil, cursors, len(edges) < n, nil
}

// pageSource is where a curation page's candidates come from, newest
// first: next reads up to n from where the last read stopped, with their
// authors when known and each one's cursor.
type pageSource interface {
	next(ctx context.Context, n int) (ids, authors, cursors []string, exhausted bool, err error)
}

// readPage reads a page of up to first posts from src that viewerID may
// see, and that their keyword filters do not hide in in (0: none),
// round by round as the timelines do (candidates, pageRounds,
// social.TakeReadBudget), with what w asks for: stage 2 of the page fetch
// joins the first round's check, stage 3 runs once at the end. A page cut
// short by the read budget ends at the last candidate read (End).
func (s *CurationService) readPage(ctx context.Context, in social.FilterContext, viewerID string, first int, w readplan.PageWants, src pageSource) (*readplan.Page, error) {
	f := s.pages.newPageFetch(viewerID, w, first)
	var out []*social.Post
	var cursors []string
	more, last := true, ""
	for round := 0; round < pageRounds && more && len(out) <= first; round++ {
		n := candidates(first, round)
		if round > 0 {
			if n = social.TakeReadBudget(ctx, n); n == 0 {
				break
			}
		}
		ids, authors, cur, exhausted, err := src.next(ctx, n)
		if err != nil {
			return nil, err
		}
		more = !exhausted
		if len(ids) == 0 {
			continue // a round of muted authors only, or the end
		}
		last = cur[len(cur)-1]
		fetch := f
		if round > 0 {
			fetch = nil // the later rounds' posts get theirs in stage 3
		}
		posts, err := s.posts().visibleIn(ctx, in, viewerID, ids, authors, fetch.along(authors))
		if err != nil {
			return nil, err
		}
		for i, post := range posts {
			if post != nil {
				out, cursors = append(out, post), append(cursors, cur[i])
			}
		}
	}
	c := social.Connection[*social.Post]{HasNext: len(out) > first || (more && len(out) > 0)}
	if len(out) <= first && more && last != "" {
		c.HasNext, c.End = true, last
	}
	c.Items, c.Cursors = out[:min(len(out), first)], cursors[:min(len(out), first)]
	return f.finish(ctx, c)
}

// DeleteUserBookmarks removes every bookmark of userID (account
// deletion): their Bookmarks, and their entry in each post's
// PostBookmarkers and PostViewers flags. Re-runnable.
func (s *CurationService) DeleteUserBookmarks(ctx context.Context, userID string) error {
	k := s.keys
	for {
		ids, err := s.rdb.ZRange(ctx, k.Bookmarks(userID), 0, 199).Result()
		if err != nil || len(ids) == 0 {
			return wrapErr(err, "read the bookmarks of %s", userID)
		}
		cmds, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
			for _, id := range ids {
				bookmarkScript.EvalSha(ctx, p, []string{k.Post(id), k.PostViewers(id), k.PostBookmarkers(id)}, userID, "off")
			}
			return nil
		})
		if err := pipelineErr(cmds, err); err != nil {
			return fmt.Errorf("drop the bookmarks of %s: %w", userID, err)
		}
		members := make([]any, len(ids))
		for i, id := range ids {
			members[i] = id
		}
		if err := s.rdb.ZRem(ctx, k.Bookmarks(userID), members...).Err(); err != nil {
			return fmt.Errorf("drop the bookmarks of %s: %w", userID, err)
		}
	}
}
