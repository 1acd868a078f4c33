package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Lists below objects, read for many parents at once.
//
// ListPages serves the list loader: the pages of followers, following,
// likers, comments and answers of every parent of a query level are one pipeline
// (one script run per list, each on its parent's slot), whatever the number
// of parents and their page sizes. Common following adds a round of
// ZMSCOREs for all its pages together, and further rounds, within its
// bounds, only for the pages whose first chunk did not fill them (see
// CommonFollowing).

// ListPages returns the page of each key as viewerID ("" for anonymous)
// may see it, index by index, with an error per key (a malformed cursor,
// say) or one error for all. A user's followers and following are empty
// for a viewer the user blocked, and their common following for a viewer
// either of the two blocked (social.SeesGraphOf); comments and answers
// leave out those of users on either side of a block with the viewer.
//
// Pages of comments leave out those the viewer's keyword filters hide in
// COMMENTS (filteredComments), whose filters ride in the pages' pipeline.
func (s *TimelineService) ListPages(ctx context.Context, viewerID string, keys []readplan.ListKey) ([]readplan.ListPage, []error) {
	filters := newViewerFilters(ctx, viewerID, slices.ContainsFunc(keys, isCommentList))
	out, errs := listPages(ctx, s.rdb, s.keys, viewerID, keys, filters)
	if len(out) != len(keys) {
		return out, errs // one error for all
	}
	m := filters.matcher(ctx, s.set.now())
	for i, k := range keys {
		if errs[i] == nil && isCommentList(k) && m.Applies(social.FilterComments) {
			out[i].Comments, errs[i] = s.filteredComments(ctx, m, viewerID, k, out[i].Comments)
		}
	}
	return out, errs
}

func isCommentList(k readplan.ListKey) bool {
	return k.List == readplan.ListComments || k.List == readplan.ListReplies
}

// listPages is ListPages, for the single-list reads of the graph and
// engagement services (filters nil), with filters' read queued in its
// pipeline.
func listPages(ctx context.Context, rdb redis.UniversalClient, ks Keys, viewerID string, keys []readplan.ListKey, filters *viewerFilters) ([]readplan.ListPage, []error) {
	out := make([]readplan.ListPage, len(keys))
	errs := make([]error, len(keys))
	edges := make([]*redis.Cmd, len(keys))
	comments := make([]*redis.Cmd, len(keys))
	common := make([]*commonWalk, len(keys))
	firsts := make([]int, len(keys))
	queued := false
	shared := newCommonShared()
	// The viewer's blocks, both ways, when a comment page is read: their
	// comments are left out (social.WithoutCommentsOf).
	blocks := &visibility{viewer: viewerID}
	_, err := pipelined(ctx, rdb, func(p redis.Pipeliner) error {
		shared.reset() // sent again: queue the shared reads again
		blocks.blocks, blocks.blocked = nil, nil
		for i, k := range keys {
			var err error
			switch k.List {
			case readplan.ListFollowers, readplan.ListFollowing, readplan.ListLikers, readplan.ListMembers, readplan.ListFollowRequests:
				edges[i], err = queueEdgePage(ctx, p, ks, viewerID, k)
			case readplan.ListComments, readplan.ListReplies:
				comments[i], err = queueCommentPage(ctx, p, ks, k)
				if comments[i] != nil && viewerID != "" && blocks.blocks == nil {
					blocks.blocks = p.SUnion(ctx, ks.Blocks(viewerID), ks.BlockedBy(viewerID))
				}
			case readplan.ListCommonFollowing:
				// Made once: a walk pays for its first chunk when made.
				if common[i] == nil {
					common[i], err = newCommonWalk(ctx, ks, k)
				}
				if err == nil {
					common[i].queueStart(ctx, p, ks, viewerID, isCluster(rdb), shared)
				}
			default:
				err = fmt.Errorf("unknown list %q", k.List)
			}
			errs[i] = err
			firsts[i] = k.Page.First
			queued = queued || (err == nil && (edges[i] != nil || comments[i] != nil || common[i] != nil))
		}
		if !queued {
			return errNothingQueued
		}
		if filters != nil {
			filters.queue(ctx, p, ks)
		}
		return nil
	})
	if err == errNothingQueued {
		return out, errs
	}
	if err != nil && !isNil(err) {
		return nil, []error{fmt.Errorf("load %d list pages: %w", len(keys), err)}
	}
	for i, k := range keys {
		switch {
		case errs[i] != nil:
		case edges[i] != nil:
			total, e, err := parseEdgePage(edges[i])
			out[i].Users, errs[i] = edgeConnection(e, firsts[i], total), wrapList(k, err)
		case comments[i] != nil:
			post := k.Parent
			if k.List == readplan.ListReplies {
				post = k.With
			}
			c, err := commentsFromReply(post, firsts[i], comments[i])
			out[i].Comments, errs[i] = social.WithoutCommentsOf(c, blocks.hidden), wrapList(k, err)
		}
	}
	if err := walkCommon(ctx, rdb, common, shared); err != nil {
		return nil, []error{err}
	}
	for i, w := range common {
		if w != nil {
			out[i].Users, errs[i] = w.page, w.err
		}
	}
	return out, errs
}

// queueEdgePage queues the read of a page of an edge list (edgePageScript).
func queueEdgePage(ctx context.Context, p redis.Pipeliner, ks Keys, viewerID string, k readplan.ListKey) (*redis.Cmd, error) {
	pos, err := edgeCursor(k.Page)
	if err != nil {
		return nil, err
	}
	zkeys, args := []string{listKey(ks, k)}, []any{pos.score, pos.member, k.Page.First + 1}
	if (k.List == readplan.ListFollowers || k.List == readplan.ListFollowing) && viewerID != "" && viewerID != k.Parent {
		// The owner's Blocks, in the owner's slot.
		zkeys, args = append(zkeys, ks.Blocks(k.Parent)), append(args, viewerID)
	}
	return edgePageScript.EvalSha(ctx, p, zkeys, args...), nil
}

// listKey is the zset of an edge list.
func listKey(keys Keys, k readplan.ListKey) string {
	switch k.List {
	case readplan.ListFollowers:
		return keys.Followers(k.Parent)
	case readplan.ListFollowing:
		return keys.Following(k.Parent)
	case readplan.ListFollowRequests:
		return keys.FollowRequests(k.Parent)
	case readplan.ListMembers:
		owner, lid, _ := strings.Cut(k.Parent, ":")
		return keys.ListMembers(owner, lid)
	default:
		return keys.Likers(k.Parent)
	}
}

func wrapList(k readplan.ListKey, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("load %s of %s: %w", k.List, k.Parent, err)
}

// listPage reads one list page (the single-parent reads of graph.go and
// engagement_likes.go).
func listPage(ctx context.Context, rdb redis.UniversalClient, keys Keys, viewerID string, k readplan.ListKey) (readplan.ListPage, error) {
	pages, errs := listPages(ctx, rdb, keys, viewerID, []readplan.ListKey{k}, nil)
	if len(pages) == 0 {
		return readplan.ListPage{}, errs[0]
	}
	return pages[0], errs[0]
}

// commentCursor validates a page request of a post's comments and returns
// the comment id its cursor names ("" for the first page).
func commentCursor(p social.PageRequest) (string, error) {
	if err := social.ValidateFirst(p.First); err != nil {
		return "", err
	}
	if p.After == "" {
		return "", nil
	}
	parts, err := social.DecodeCursor(p.After, 1)
	if err != nil {
		return "", err
	}
	if !social.IsID(parts[0]) {
		return "", social.Errorf(social.BadUserInput, "malformed cursor")
	}
	return parts[0], nil
}

// queueCommentPage queues the read of a page of a post's comments, or of
// a comment's answers (nil for a parent that cannot exist).
func queueCommentPage(ctx context.Context, p redis.Pipeliner, ks Keys, k readplan.ListKey) (*redis.Cmd, error) {
	after, err := commentCursor(k.Page)
	switch {
	case err != nil || !social.IsID(k.Parent):
		return nil, err
	case k.List == readplan.ListComments:
		return queueCommentRows(ctx, p, ks, k.Parent, k.Page.First+1, after, false), nil
	case social.IsID(k.With):
		return queueReplyRows(ctx, p, ks, k.With, k.Parent, k.Page.First+1, after), nil
	}
	return nil, nil
}
