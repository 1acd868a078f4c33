package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// EngagementService keeps likes and comments (graph.Engagement).
type EngagementService struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
}

// Likes and comments.
//
// Everything a like or a comment writes lives in its post's {p<id>} slot —
// the post hash, the Likers zset, the PostComments list and each
// PostComment hash — so every write is one atomic script that also checks
// the post still exists, and one that a deletion of the post can not
// interleave with. Only the comment→post index (CommentPost) lives
// elsewhere; it is written before a comment and removed after it, so a
// crash between the two steps leaves a dangling index entry, which reads
// as a missing comment, and never a visible half-written one.

// engageable checks that viewerID may like or comment on postID, with the
// read-time visibility check of the read path (one pipeline). A post that
// does not exist, whose audience excludes the viewer, or whose author
// blocked the viewer or was blocked by the viewer is NOT_FOUND: the read
// path hides all of them alike, and FORBIDDEN would reveal that the post
// exists.
func (s *EngagementService) engageable(ctx context.Context, viewerID, postID string) (*social.Post, error) {
	v := s.set.postReader(s.rdb, s.keys).newVisibility(viewerID, []string{postID})
	if err := v.check(ctx); err != nil {
		return nil, fmt.Errorf("check post %s: %w", postID, err)
	}
	if v.access(0) != social.Visible {
		return nil, social.Errorf(social.NotFound, "post %s not found", postID)
	}
	return v.post(0), nil
}

// Like records that viewerID likes postID. Idempotent.
func (s *EngagementService) Like(ctx context.Context, viewerID, postID string) error {
	post, err := s.engageable(ctx, viewerID, postID)
	if err != nil {
		return err
	}
	// The like and its notification job in one round trip: the worker
	// reads whether the like stands when it runs the job.
	var like *redis.Cmd
	cmds, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		// The liker's index first (ZADD NX keeps the first time): the
		// purge of the account finds its likes there, and its data export
		// lists them (checking each against the likers: one left by a post
		// that is gone is skipped).
		p.ZAddNX(ctx, s.keys.UserLikes(viewerID), redis.Z{Score: float64(s.set.now().UnixMilli()), Member: postID})
		like = likeScript.EvalSha(ctx, p, likeKeys(s.keys, postID), viewerID, "like")
		queueNote(ctx, p, s.keys, s.set.feed.FanoutShards, s.set.now(), social.NoteLike, postID, "", viewerID, post.AuthorID)
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("like post %s: %w", postID, err)
	}
	if ok, _ := like.Int(); ok == 0 {
		return social.Errorf(social.NotFound, "post %s not found", postID)
	}
	return nil
}

// Unlike removes viewerID's like of postID. Idempotent. It answers as Like
// does for a post the viewer may not see or interact with: the post is
// hidden from a blocked user altogether, so there is nothing to unlike.
func (s *EngagementService) Unlike(ctx context.Context, viewerID, postID string) error {
	post, err := s.engageable(ctx, viewerID, postID)
	if err != nil {
		return err
	}
	cmds, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		likeScript.EvalSha(ctx, p, likeKeys(s.keys, postID), viewerID, "unlike")
		p.ZRem(ctx, s.keys.UserLikes(viewerID), postID)
		queueNote(ctx, p, s.keys, s.set.feed.FanoutShards, s.set.now(), social.NoteLike, postID, "", viewerID, post.AuthorID)
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("unlike post %s: %w", postID, err)
	}
	return nil
}

// likeKeys are likeScript's keys.
func likeKeys(k Keys, postID string) []string {
	return []string{k.Post(postID), k.Likers(postID), k.PostViewers(postID)}
}

// Marks reports, for each post, whether viewerID likes it and has a plain
// repost of it (one pipeline).
func (s *EngagementService) Marks(ctx context.Context, viewerID string, postIDs []string) ([]social.Marks, error) {
	cmds := make([]markCmds, len(postIDs))
	sent, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range postIDs {
			cmds[i] = queueMarks(ctx, p, s.keys, viewerID, id)
		}
		return nil
	})
	if err := pipelineErr(sent, err); err != nil {
		return nil, fmt.Errorf("load likes and reposts of %d posts: %w", len(postIDs), err)
	}
	out := make([]social.Marks, len(postIDs))
	for i, c := range cmds {
		out[i] = c.marks()
	}
	return out, nil
}

// Likers returns a page of the ids of the users who liked postID, newest
// like first; Total is the number of likes. Likers is a zset scored by time
// like the graph's edge lists, and pages the same way (edgePage), with
// cursors that stay stable while others like and unlike.
func (s *EngagementService) Likers(ctx context.Context, postID string, p social.PageRequest) (social.Connection[string], error) {
	pg, err := listPage(ctx, s.rdb, s.keys, "", readplan.ListKey{List: readplan.ListLikers, Parent: postID, Page: p})
	return pg.Users, err
}
