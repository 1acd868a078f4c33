package graph

import (
	"context"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// graphEdit runs a follow/block/mute style mutation and returns the target
// user, read after the edit (freshLoaders).
func (r *Resolver) graphEdit(ctx context.Context, userID string, edit func(ctx context.Context, viewerID, userID string) error) (*social.User, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	if err := edit(ctx, v.UserID, userID); err != nil {
		return nil, err
	}
	return loadUser(ctx, userID)
}

// likeEdit runs likePost or unlikePost and returns the post, read after
// the edit (freshLoaders).
func (r *Resolver) likeEdit(ctx context.Context, postID string, edit func(ctx context.Context, viewerID, postID string) error) (*social.Post, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	if err := edit(ctx, v.UserID, postID); err != nil {
		return nil, err
	}
	return loadPost(ctx, postID)
}

func (r *Resolver) userPosts(ctx context.Context, userID string, first *int, after *string) (*model.Timeline, error) {
	p, err := social.NewPageRequest(first, after)
	if err != nil {
		return nil, err
	}
	page, err := loader.For(ctx).UserPages.Load(ctx, readplan.UserPageKey{User: userID, Page: p, Wants: r.ahead.pageWants(ctx)})
	if err != nil {
		return nil, err
	}
	return r.timeline(ctx, page), nil
}

// audience returns a post's audience lists when the viewer is its author;
// ok is false for everyone else, who sees null.
func (r *Resolver) audience(ctx context.Context, p *social.Post) (social.Audience, bool, error) {
	if social.ViewerID(ctx) != p.AuthorID || p.Visibility == social.Public {
		return social.Audience{}, false, nil
	}
	a, err := r.Posts.Audience(ctx, p.ID)
	return a, err == nil, err
}
