package graph

import (
	"context"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/social"
)

// Editing posts and answering comments: what their resolvers do beyond a
// call.

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
