package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// EngagementService keeps likes and comments (graph.Engagement).
type EngagementService struct{ *DB }

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

// deletedCommentTTL is how long a deleted comment's tombstone lets a
// retried delete recognise its own earlier run.
const deletedCommentTTL = time.Minute

// commentFields are the fields of a PostComment hash, in the order read.
var commentFields = []string{"author", "content", "created"}

// postAuthorField is the post hash field holding the author's id.
const postAuthorField = "author"

// engageable checks that viewerID may like or comment on postID, with the
// read-time visibility check of the read path (one pipeline). A post that
// does not exist, whose audience excludes the viewer, or whose author
// blocked the viewer or was blocked by the viewer is NOT_FOUND: the read
// path hides all of them alike, and FORBIDDEN would reveal that the post
// exists.
func (s *DB) engageable(ctx context.Context, viewerID, postID string) (*social.Post, error) {
	v := s.newVisibility(viewerID, []string{postID})
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error { v.queue(ctx, p); return nil }); err != nil {
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
	cmds, err := s.pipelined(ctx, func(p redis.Pipeliner) error {
		like = likeScript.EvalSha(ctx, p, []string{s.keys.Post(postID), s.keys.Likers(postID)}, viewerID)
		s.queueNote(ctx, p, social.NoteLike, postID, "", viewerID, post.AuthorID)
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
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, s.keys.Likers(postID), viewerID)
		s.queueNote(ctx, p, social.NoteLike, postID, "", viewerID, post.AuthorID)
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("unlike post %s: %w", postID, err)
	}
	return nil
}

// Marks reports, for each post, whether viewerID likes it and has a plain
// repost of it (one pipeline).
func (s *EngagementService) Marks(ctx context.Context, viewerID string, postIDs []string) ([]social.Marks, error) {
	cmds := make([]markCmds, len(postIDs))
	sent, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range postIDs {
			cmds[i] = s.queueMarks(ctx, p, viewerID, id)
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

// markCmds are the replies of one post's marks.
type markCmds struct {
	liked    *redis.FloatCmd
	reposted *redis.StringCmd
}

// queueMarks queues whether viewerID likes postID (ZSCORE of Likers) and
// has a plain repost of it (HGET of PostPlainReposts); nil replies: no.
func (s *DB) queueMarks(ctx context.Context, p redis.Pipeliner, viewerID, postID string) markCmds {
	if !social.IsID(postID) || viewerID == "" {
		return markCmds{}
	}
	return markCmds{p.ZScore(ctx, s.keys.Likers(postID), viewerID), p.HGet(ctx, s.keys.PostPlainReposts(postID), viewerID)}
}

func (c markCmds) marks() social.Marks {
	if c.liked == nil {
		return social.Marks{}
	}
	return social.Marks{Liked: c.liked.Err() == nil, Reposted: c.reposted.Val() != ""}
}

// Likers returns a page of the ids of the users who liked postID, newest
// like first; Total is the number of likes. Likers is a zset scored by time
// like the graph's edge lists, and pages the same way (edgePage), with
// cursors that stay stable while others like and unlike.
func (s *EngagementService) Likers(ctx context.Context, postID string, p social.PageRequest) (social.Connection[string], error) {
	pg, err := s.listPage(ctx, "", social.ListKey{List: social.ListLikers, Parent: postID, Page: p})
	return pg.Users, err
}

// AddComment adds viewerID's comment to postID.
func (s *EngagementService) AddComment(ctx context.Context, viewerID, postID, content string) (*social.Comment, error) {
	content, err := social.ValidateComment(content)
	if err != nil {
		return nil, err
	}
	post, err := s.engageable(ctx, viewerID, postID)
	if err != nil {
		return nil, err
	}
	mentions, err := s.resolveMentions(ctx, viewerID, content)
	if err != nil {
		return nil, err
	}
	// A retried INCR only leaves a gap in the ids.
	n, err := s.rdb.Incr(ctx, s.keys.CommentSeq()).Result()
	if err != nil {
		return nil, fmt.Errorf("allocate comment id: %w", err)
	}
	id := strconv.FormatInt(n, 10)
	// The index first: until the script below runs it points at nothing,
	// which reads as a missing comment.
	if err := s.rdb.HSet(ctx, s.keys.CommentPost(id), id, postID).Err(); err != nil {
		return nil, fmt.Errorf("index comment %s: %w", id, err)
	}
	created := s.now().UTC()
	res, err := addCommentScript.Run(ctx, s.rdb,
		[]string{s.keys.Post(postID), s.keys.PostComment(postID, id), s.keys.PostComments(postID)},
		id, "author", viewerID, "content", content, "created", msString(created), "mentions", strings.Join(mentions, ","),
	).Text()
	if err != nil {
		return nil, fmt.Errorf("add comment to post %s: %w", postID, err)
	}
	if res == "GONE" {
		// The post was deleted meanwhile; the index entry is garbage.
		_ = s.rdb.HDel(ctx, s.keys.CommentPost(id), id).Err()
		return nil, social.Errorf(social.NotFound, "post %s not found", postID)
	}
	if err := s.notifyComment(ctx, id, postID, viewerID, post.AuthorID, mentions); err != nil {
		return nil, err
	}
	return &social.Comment{ID: id, PostID: postID, AuthorID: viewerID, Content: content, CreatedAt: created.Truncate(time.Millisecond)}, nil
}

// DeleteComment deletes a comment; only its author and the post's author
// may. Deleting it again within a minute (a retry) succeeds again.
func (s *EngagementService) DeleteComment(ctx context.Context, viewerID, commentID string) error {
	postID, err := s.commentPost(ctx, commentID)
	if err != nil {
		return err
	}
	if postID == "" {
		return social.Errorf(social.NotFound, "comment %s not found", commentID)
	}
	// Who the comment notified, for the jobs that take it back.
	var hash *redis.SliceCmd
	var postAuthor *redis.StringCmd
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		hash = p.HMGet(ctx, s.keys.PostComment(postID, commentID), "author", "mentions")
		postAuthor = p.HGet(ctx, s.keys.Post(postID), postAuthorField)
		return nil
	}); err != nil && !isNil(err) {
		return fmt.Errorf("load comment %s: %w", commentID, err)
	}
	res, err := deleteCommentScript.Run(ctx, s.rdb,
		[]string{s.keys.Post(postID), s.keys.PostComment(postID, commentID), s.keys.PostComments(postID)},
		commentID, viewerID, deletedCommentTTL.Milliseconds(), postAuthorField,
	).Text()
	if err != nil {
		return fmt.Errorf("delete comment %s: %w", commentID, err)
	}
	switch res {
	case "GONE":
		return social.Errorf(social.NotFound, "comment %s not found", commentID)
	case "FORBIDDEN":
		// Say NOT_FOUND when the post is hidden from the viewer, so that
		// neither it nor its comments are revealed.
		if _, err := s.engageable(ctx, viewerID, postID); social.IsCode(err, social.NotFound) {
			return social.Errorf(social.NotFound, "comment %s not found", commentID)
		} else if err != nil && !social.IsCode(err, social.Forbidden) {
			return err
		}
		return social.Errorf(social.Forbidden, "only the comment's author and the post's author may delete it")
	}
	if err := s.rdb.HDel(ctx, s.keys.CommentPost(commentID), commentID).Err(); err != nil {
		return fmt.Errorf("unindex comment %s: %w", commentID, err)
	}
	author, _ := hash.Val()[0].(string)
	mentions, _ := hash.Val()[1].(string)
	if author == "" {
		return nil // deleted by an earlier run, which queued the jobs
	}
	return s.notifyComment(ctx, commentID, postID, author, postAuthor.Val(), splitIDs(mentions))
}

// notifyComment queues the jobs of a comment's notifications: its post's
// author, and the users it mentions.
func (s *DB) notifyComment(ctx context.Context, id, postID, author, postAuthor string, mentions []string) error {
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if postAuthor != "" {
			s.queueNote(ctx, p, social.NoteComment, id, postID, author, postAuthor)
		}
		s.queueNote(ctx, p, social.NoteMention, id, postID, author, mentions...)
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil && err != errNothingQueued {
		return fmt.Errorf("queue notifications of comment %s: %w", id, err)
	}
	return nil
}

// splitIDs splits a comma-separated list of ids ("" is none).
func splitIDs(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

// commentPost returns the id of a comment's post from the index, or "".
func (s *DB) commentPost(ctx context.Context, id string) (string, error) {
	if !social.IsID(id) {
		return "", nil
	}
	post, err := s.rdb.HGet(ctx, s.keys.CommentPost(id), id).Result()
	if isNil(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("look up post of comment %s: %w", id, err)
	}
	return post, nil
}

// Comments loads comments by id; missing or deleted ones are nil. It costs
// two pipelines: the index, then the comment hashes. Callers that already
// know the post ids (a page of a post's comments) use commentsOf instead.
func (s *EngagementService) Comments(ctx context.Context, ids []string) ([]*social.Comment, error) {
	posts := make([]*redis.StringCmd, len(ids))
	sent, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			if social.IsID(id) {
				posts[i] = p.HGet(ctx, s.keys.CommentPost(id), id)
			}
		}
		return nil
	})
	if err := pipelineErr(sent, err); err != nil {
		return nil, fmt.Errorf("look up posts of %d comments: %w", len(ids), err)
	}
	refs := make([]commentRef, len(ids))
	for i, c := range posts {
		refs[i].ID = ids[i]
		if c != nil {
			refs[i].PostID = c.Val()
		}
	}
	return s.commentsOf(ctx, refs)
}

// commentRef names a comment and its post.
type commentRef struct{ ID, PostID string }

// commentsOf loads comments whose post is known with one pipeline; refs
// with no post, and comments that are missing or deleted, are nil.
func (s *DB) commentsOf(ctx context.Context, refs []commentRef) ([]*social.Comment, error) {
	cmds := make([]*redis.SliceCmd, len(refs))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range refs {
			if r.PostID != "" {
				cmds[i] = p.HMGet(ctx, s.keys.PostComment(r.PostID, r.ID), commentFields...)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load %d comments: %w", len(refs), err)
	}
	out := make([]*social.Comment, len(refs))
	for i, c := range cmds {
		if c == nil {
			continue
		}
		v := c.Val()
		author, _ := v[0].(string)
		if author == "" {
			continue // missing, or a deleted comment's tombstone
		}
		content, _ := v[1].(string)
		created, _ := v[2].(string)
		out[i] = &social.Comment{ID: refs[i].ID, PostID: refs[i].PostID, AuthorID: author, Content: content, CreatedAt: msTime(created)}
	}
	return out, nil
}

// PostComments returns a page of a post's comment ids, newest first; Total
// is the number of comments. It is PostCommentsPage without the comments.
func (s *EngagementService) PostComments(ctx context.Context, postID string, p social.PageRequest) (social.Connection[string], error) {
	c, err := s.PostCommentsPage(ctx, postID, p)
	out := social.Connection[string]{Cursors: c.Cursors, HasNext: c.HasNext, Total: c.Total}
	for _, cm := range c.Items {
		out.Items = append(out.Items, cm.ID)
	}
	return out, err
}

// deletePostEngagement removes a post's likes and comments. DeletePost
// calls it after the post hash is gone, when no new like or comment can
// arrive (their scripts check the post exists in the same step). The list
// goes last, so a run cut short is finished by running it again.
func (s *DB) deletePostEngagement(ctx context.Context, postID string) error {
	list := s.keys.PostComments(postID)
	ids, err := s.rdb.LRange(ctx, list, 0, -1).Result()
	if err != nil {
		return fmt.Errorf("list comments of post %s: %w", postID, err)
	}
	const batch = 1000
	for start := 0; start < len(ids); start += batch {
		part := ids[start:min(start+batch, len(ids))]
		keys := make([]string, len(part))
		for i, id := range part {
			keys[i] = s.keys.PostComment(postID, id)
		}
		_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, keys...)
			for _, id := range part {
				p.HDel(ctx, s.keys.CommentPost(id), id)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("delete comments of post %s: %w", postID, err)
		}
	}
	if err := s.rdb.Del(ctx, s.keys.Likers(postID), list).Err(); err != nil {
		return fmt.Errorf("delete likes and comments of post %s: %w", postID, err)
	}
	return nil
}
