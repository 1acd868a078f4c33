package graph

import (
	"context"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/social"
)

// Editing posts and answering comments: what their resolvers do beyond a
// call.

// editPost edits one of the viewer's posts.
func (r *Resolver) editPost(ctx context.Context, id string, input model.EditPostInput) (*social.Post, error) {
	v, err := r.poster(ctx)
	if err != nil {
		return nil, err
	}
	return r.Edits.EditPost(ctx, v.UserID, id, editInput(input))
}

// addComment adds the viewer's comment, or with inReplyTo their answer to
// a comment (an account that may post: CanPost); the new comment is
// primed in the loader, so the answer's selection reads no Redis for it.
func (r *Resolver) addComment(ctx context.Context, postID, content string, inReplyTo *string) (*social.Comment, error) {
	v, err := r.poster(ctx)
	if err != nil {
		return nil, err
	}
	var c *social.Comment
	if inReplyTo != nil && *inReplyTo != "" {
		c, err = r.Replies.AddReply(ctx, v.UserID, postID, content, *inReplyTo)
	} else {
		c, err = r.Engagement.AddComment(ctx, v.UserID, postID, content)
	}
	if err != nil {
		return nil, err
	}
	loader.For(ctx).Comments.Prime(c.ID, c)
	return c, nil
}

// editInput is an edit as the domain takes it.
func editInput(in model.EditPostInput) social.EditPost {
	e := social.EditPost{Content: in.Content, Sensitive: in.Sensitive != nil && *in.Sensitive}
	if in.SpoilerText != nil {
		e.SpoilerText = *in.SpoilerText
	}
	return e
}

// postEdits are a post's earlier versions, newest first, through the
// request's loader (one round trip for a level's posts).
func postEdits(ctx context.Context, p *social.Post) ([]*social.PostEdit, error) {
	if p.EditedAt == nil {
		return []*social.PostEdit{}, nil // never edited: nothing to read
	}
	edits, err := loader.For(ctx).Edits.Load(ctx, p.ID)
	if err != nil {
		return nil, err
	}
	out := make([]*social.PostEdit, len(edits))
	for i := range edits {
		out[i] = &edits[i]
	}
	return out, nil
}

// answered is the comment c answers: null for a top-level comment, and
// for an answer to a comment deleted since.
func answered(ctx context.Context, c *social.Comment) (*social.Comment, error) {
	if c.InReplyToID == "" {
		return nil, nil
	}
	return loader.For(ctx).Comments.Load(ctx, c.InReplyToID)
}
