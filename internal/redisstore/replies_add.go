package redisstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// ReplyService answers comments: addComment with inReplyTo
// (graph.Replies).
//
// An answer is a comment of the same post (PostComments lists it, and
// commentsCount counts it) whose hash names the comment it answers
// (reply) and that comment's author (rto, who is told: REPLY); its id
// also goes into the answered comment's CommentReplies, oldest first, in
// the same script. Every comment of a post is in the post's slot, so a
// thread of any depth is read and written there. Deleting a comment
// deletes its list of answers and takes it out of the list of the comment
// it answers (deleteCommentScript): its answers stay, answering a comment
// that reads null.
type ReplyService struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
	// eng writes the answer as a comment and queues its notifications.
	eng *EngagementService
}

// AddReply adds viewerID's answer to comment inReplyTo of postID. The post
// must be one the viewer may see (else NOT_FOUND); the comment answered
// must be one of that post's (another post's is BAD_USER_INPUT, a missing
// one NOT_FOUND), and its author in no block with the viewer (hidden
// from each other: NOT_FOUND). Nothing is written unless every check
// passes.
func (s *ReplyService) AddReply(ctx context.Context, viewerID, postID, content, inReplyTo string) (*social.Comment, error) {
	content, err := social.ValidateComment(content)
	if err != nil {
		return nil, err
	}
	if !social.IsID(postID) {
		return nil, social.Errorf(social.NotFound, "post %s not found", postID)
	}
	if !social.IsID(inReplyTo) {
		return nil, social.Errorf(social.NotFound, "comment %s not found", inReplyTo)
	}
	post, parent, err := s.check(ctx, viewerID, postID, inReplyTo)
	if err != nil {
		return nil, err
	}
	mentions, err := resolveMentions(ctx, s.rdb, s.keys, viewerID, content)
	if err != nil {
		return nil, err
	}
	return s.eng.addComment(ctx, viewerID, post.AuthorID, postID, content, mentions, answered{id: inReplyTo, author: parent})
}

// check reads, in one round trip, the post as the viewer may see it and
// the comment answered, and returns the post and that comment's author.
func (s *ReplyService) check(ctx context.Context, viewerID, postID, inReplyTo string) (*social.Post, string, error) {
	v := s.set.postReader(s.rdb, s.keys).newVisibility(viewerID, []string{postID})
	var index, author *redis.StringCmd
	cmds, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		v.queue(ctx, p)
		index = p.HGet(ctx, s.keys.CommentPost(inReplyTo), inReplyTo)
		author = p.HGet(ctx, s.keys.PostComment(postID, inReplyTo), commentRecord.name("author"))
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return nil, "", fmt.Errorf("check answer to comment %s: %w", inReplyTo, err)
	}
	if err := v.settle(ctx); err != nil {
		return nil, "", err
	}
	if v.access(0) != social.Visible {
		return nil, "", social.Errorf(social.NotFound, "post %s not found", postID)
	}
	switch on := index.Val(); {
	case on != "" && on != postID:
		return nil, "", social.Errorf(social.BadUserInput, "comment %s is not a comment of post %s: an answer is on the post of the comment it answers", inReplyTo, postID)
	case on == "" || author.Val() == "":
		return nil, "", social.Errorf(social.NotFound, "comment %s not found", inReplyTo)
	}
	if v.blocks != nil && slices.Contains(v.blocks.Val(), author.Val()) {
		return nil, "", social.Errorf(social.NotFound, "comment %s not found", inReplyTo)
	}
	return v.post(0), author.Val(), nil
}
