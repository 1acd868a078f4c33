package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// screenFields are what screening reads of a post's hash: its author and
// vis, for social.PostAccess, and pv, whether its PostViewers is kept.
var screenFields = postRecord.args("author", "vis", "pv")

// screen returns the indexes of the candidates in ids that viewerID may
// see as far as their audience goes, in order. Per candidate it reads the
// viewer's flag in PostViewers and three small fields of the post's hash
// (pv is read each time, not cached: a restore of older data takes it
// away), where the visibility check (visiblePosts) reads the hash with
// its counters and packed comments: a page that reads past many posts
// hidden from its viewer (an author's ONLY_TO posts to others) pays
// little for each. It is a filter in front of the check, not a verdict:
// what it keeps still goes through visiblePosts, which alone decides
// (blocks included), so a screen can only spare reading what is sure to
// be hidden. A post whose PostViewers is not kept yet (no pv) is kept,
// for the check to build it.
//
// Its verdicts on posts that exist hold for good (an audience never
// changes), so the operation remembers them (social.NoteScreened) and
// its other pages take them without asking Redis: aliases of one author's
// timeline screen each post once.
//
// It costs one round trip; readers screen only the candidates that are
// not public (timeline_user.go).
func (s *TimelineService) screen(ctx context.Context, viewerID string, ids []string) ([]int, error) {
	if viewerID == "" {
		return nil, fmt.Errorf("screen: no viewer")
	}
	hash := make([]*redis.SliceCmd, len(ids))
	flags := make([]*redis.StringCmd, len(ids))
	keep := make([]int, 0, len(ids))
	cmds, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		for i, id := range ids {
			hidden, known := social.Screened(ctx, viewerID, id)
			switch {
			case known && !hidden:
				keep = append(keep, i)
			case !known && social.IsID(id):
				hash[i] = hmget(ctx, p, s.keys.Post(id), screenFields)
				flags[i] = p.HGet(ctx, s.keys.PostViewers(id), viewerID)
			}
		}
		return nil
	})
	// HGET of a flag that is not there answers nil: not an error.
	if err := pipelineErr(cmds, err); err != nil {
		return nil, fmt.Errorf("screen %d posts: %w", len(ids), err)
	}
	for i, h := range hash {
		if h == nil {
			continue
		}
		vals := h.Val()
		kept := screenKeeps(viewerID, vals, flags[i].Val())
		if author, _ := vals[0].(string); author != "" {
			// A missing post is not remembered (visiblePosts says why).
			social.NoteScreened(ctx, viewerID, ids[i], !kept)
		}
		if kept {
			keep = append(keep, i)
		}
	}
	slices.Sort(keep)
	return keep, nil
}

// screenKeeps applies social.PostAccess to what screen read of one post
// (screenFields, the viewer's flag letters), blocks left to the check.
func screenKeeps(viewerID string, vals []any, flags string) bool {
	author, _ := vals[0].(string)
	vis, _ := vals[1].(string)
	pv, _ := vals[2].(string)
	switch {
	case author == "":
		return false // deleted, or never written
	case pv == "":
		return true
	}
	// The a flag mirrors membership of the post's one audience set.
	p := &social.Post{AuthorID: author, Visibility: social.Visibility(vis)}
	in := strings.Contains(flags, "a")
	return social.PostAccess(viewerID, p, social.AccessFacts{
		InOnlyTo: in && p.Visibility == social.OnlyTo,
		InNotTo:  in && p.Visibility == social.NotTo,
	}) == social.Visible
}
