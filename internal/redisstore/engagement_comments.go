package redisstore

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// deletedCommentTTL is how long a deleted comment's tombstone lets a
// retried delete recognise its own earlier run.
const deletedCommentTTL = time.Minute

// What the store reads of a comment hash (commentRecord): the comment,
// and what its deletion needs to take its notifications back.
var (
	commentRead     = commentRecord.view("author", "content", "created", "reply")
	commentNotified = commentRecord.view("author", "mentions", "rto")
)

// commentRetryWindow is how long a comment whose notification job was
// not queued is recognised by a retry of the same call (CommentRetry).
const commentRetryWindow = 10 * time.Minute

// AddComment adds viewerID's comment to postID. Writing the comment (in
// the post's slot) and queueing its notification job (in the queue's) are
// two steps; when the second fails, the call fails, and the client's
// retry of the same comment answers the comment already written, queueing
// its job, rather than writing a second one.
func (s *EngagementService) AddComment(ctx context.Context, viewerID, postID, content string) (*social.Comment, error) {
	content, err := social.ValidateComment(content)
	if err != nil {
		return nil, err
	}
	post, err := s.engageable(ctx, viewerID, postID)
	if err != nil {
		return nil, err
	}
	mentions, err := resolveMentions(ctx, s.rdb, s.keys, viewerID, content)
	if err != nil {
		return nil, err
	}
	return s.addComment(ctx, viewerID, post.AuthorID, postID, content, mentions, answered{})
}

// answered is the comment an answer replies to: its id and author ("" for
// a top-level comment).
type answered struct{ id, author string }

// addComment writes a checked comment and queues its notifications.
func (s *EngagementService) addComment(ctx context.Context, viewerID, postAuthor, postID, content string, mentions []string, to answered) (*social.Comment, error) {
	c, err := s.writeComment(ctx, viewerID, postID, content, mentions, to)
	if err != nil {
		return nil, err
	}
	if err := s.notifyComment(ctx, c.ID, postID, viewerID, postAuthor, mentions, to.author); err != nil {
		return nil, err
	}
	// The job is queued: a later comment with the same text is a new one.
	// A mark left by a failed DEL only expires.
	_ = s.rdb.Del(ctx, s.commentRetryKey(postID, viewerID, content, to.id)).Err()
	return c, nil
}

// writeComment writes a comment under a fresh id, or finds the earlier
// call's comment with the same text whose job may not be queued.
func (s *EngagementService) writeComment(ctx context.Context, viewerID, postID, content string, mentions []string, to answered) (*social.Comment, error) {
	// A retried INCR only leaves a gap in the ids.
	n, err := s.rdb.Incr(ctx, s.keys.CommentSeq()).Result()
	if err != nil {
		return nil, fmt.Errorf("allocate comment id: %w", err)
	}
	id := strconv.FormatInt(n, 10)
	// The indexes first: until the script below runs they point at
	// nothing, which reads as a missing comment (the author's index, scored
	// by when, is how the purge of the account finds its comments and its
	// data export lists them; one of a comment deleted with its post is
	// skipped there).
	created := s.set.now().UTC()
	if _, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, s.keys.UserComments(viewerID), redis.Z{Score: float64(created.UnixMilli()), Member: id})
		p.HSet(ctx, s.keys.CommentPost(id), id, postID)
		return nil
	}); err != nil {
		return nil, fmt.Errorf("index comment %s: %w", id, err)
	}
	row := commentRow{comment: social.Comment{AuthorID: viewerID, Content: content, CreatedAt: created, InReplyToID: to.id},
		mentions: mentions, replyTo: to.author}
	retry := s.commentRetryKey(postID, viewerID, content, to.id)
	keys := []string{s.keys.Post(postID), s.keys.PostComment(postID, id), s.keys.PostComments(postID), retry}
	if to.id != "" {
		keys = append(keys, s.keys.PostComment(postID, to.id), s.keys.CommentReplies(postID, to.id))
	}
	// Twice at most: an earlier comment deleted since is no answer.
	for range 2 {
		res, err := addCommentScript.Run(ctx, s.rdb, keys,
			append([]any{id, commentRetryWindow.Milliseconds(), s.keys.PostComment(postID, "")}, commentRecord.encode(&row)...)...,
		).Text()
		switch {
		case err != nil:
			return nil, fmt.Errorf("add comment to post %s: %w", postID, err)
		case res == "OK":
			return &social.Comment{ID: id, PostID: postID, AuthorID: viewerID, Content: content, CreatedAt: created.Truncate(time.Millisecond),
				InReplyToID: to.id}, nil
		}
		// The post is gone, or the comment is the earlier one: the index
		// entries of the fresh id are garbage.
		_ = s.rdb.HDel(ctx, s.keys.CommentPost(id), id).Err()
		_ = s.rdb.ZRem(ctx, s.keys.UserComments(viewerID), id).Err()
		switch res {
		case "GONE":
			return nil, social.Errorf(social.NotFound, "post %s not found", postID)
		case "NOPARENT":
			return nil, social.Errorf(social.NotFound, "comment %s not found", to.id)
		}
		earlier, err := s.commentsOf(ctx, []commentRef{{ID: res, PostID: postID}})
		if err != nil {
			return nil, err
		}
		if earlier[0] != nil {
			return earlier[0], nil
		}
		if err := s.rdb.Del(ctx, retry).Err(); err != nil {
			return nil, fmt.Errorf("add comment to post %s: %w", postID, err)
		}
		if _, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
			p.ZAdd(ctx, s.keys.UserComments(viewerID), redis.Z{Score: float64(created.UnixMilli()), Member: id})
			p.HSet(ctx, s.keys.CommentPost(id), id, postID)
			return nil
		}); err != nil {
			return nil, fmt.Errorf("index comment %s: %w", id, err)
		}
	}
	return nil, social.Errorf(social.Conflict, "a comment with the same text is being added: try again")
}

// commentRetryKey is the retry mark of viewerID's comment content on
// postID, answering comment parent ("" for none): the text and the
// comment answered enter the key as a digest.
func (s *EngagementService) commentRetryKey(postID, viewerID, content, parent string) string {
	sum := sha256.Sum256([]byte(content + "\x00" + parent))
	return s.keys.CommentRetry(postID, viewerID, hex.EncodeToString(sum[:12]))
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
		hash = commentNotified.queue(ctx, p, s.keys.PostComment(postID, commentID))
		postAuthor = p.HGet(ctx, s.keys.Post(postID), postAuthorField)
		return nil
	}); err != nil && !isNil(err) {
		return fmt.Errorf("load comment %s: %w", commentID, err)
	}
	res, err := deleteCommentScript.Run(ctx, s.rdb,
		[]string{s.keys.Post(postID), s.keys.PostComment(postID, commentID), s.keys.PostComments(postID)},
		commentID, viewerID, deletedCommentTTL.Milliseconds(), s.keys.PostComment(postID, ""), s.keys.CommentReplies(postID, ""),
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
	var c commentRow
	commentNotified.decode(&c, hash.Val())
	if c.comment.AuthorID == "" {
		return nil // deleted by an earlier run, which queued the jobs
	}
	if err := s.rdb.ZRem(ctx, s.keys.UserComments(c.comment.AuthorID), commentID).Err(); err != nil {
		return fmt.Errorf("unindex comment %s of %s: %w", commentID, c.comment.AuthorID, err)
	}
	return s.notifyComment(ctx, commentID, postID, c.comment.AuthorID, postAuthor.Val(), c.mentions, c.replyTo)
}

// notifyComment queues the jobs of a comment's notifications: its post's
// author, the users it mentions and, for an answer, the author of the
// comment answered (replyTo), who is told once, of the answer, however
// else the comment concerns them.
func (s *EngagementService) notifyComment(ctx context.Context, id, postID, author, postAuthor string, mentions []string, replyTo string) error {
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if replyTo != "" {
			queueNote(ctx, p, s.keys, s.set.feed.FanoutShards, s.set.now(), social.NoteReply, id, postID, author, replyTo)
		}
		if postAuthor != "" && postAuthor != replyTo {
			queueNote(ctx, p, s.keys, s.set.feed.FanoutShards, s.set.now(), social.NoteComment, id, postID, author, postAuthor)
		}
		if replyTo != "" {
			mentions = slices.DeleteFunc(slices.Clone(mentions), func(u string) bool { return u == replyTo })
		}
		queueNote(ctx, p, s.keys, s.set.feed.FanoutShards, s.set.now(), social.NoteMention, id, postID, author, mentions...)
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
func (s *EngagementService) commentPost(ctx context.Context, id string) (string, error) {
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
func (s *EngagementService) commentsOf(ctx context.Context, refs []commentRef) ([]*social.Comment, error) {
	cmds := make([]*redis.SliceCmd, len(refs))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range refs {
			if r.PostID != "" {
				cmds[i] = commentRead.queue(ctx, p, s.keys.PostComment(r.PostID, r.ID))
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
		var row commentRow
		commentRead.decode(&row, c.Val())
		if row.comment.AuthorID == "" {
			continue // missing, or a deleted comment's tombstone
		}
		row.comment.ID, row.comment.PostID = refs[i].ID, refs[i].PostID
		out[i] = &row.comment
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

// PostCommentsPage is PostComments with the comments themselves, in one
// round trip.
func (s *EngagementService) PostCommentsPage(ctx context.Context, postID string, p social.PageRequest) (social.Connection[*social.Comment], error) {
	pg, err := listPage(ctx, s.rdb, s.keys, "", readplan.ListKey{List: readplan.ListComments, Parent: postID, Page: p})
	return pg.Comments, err
}
