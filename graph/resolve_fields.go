package graph

import (
	"context"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/social"
)

// The bodies of resolvers longer than a call (graph/schema.resolvers.go
// keeps each resolver to one).

// noteActors are a notification's first actors (Notification.actors).
func noteActors(ctx context.Context, obj *social.Notification, first *int) ([]*social.User, error) {
	n := social.DefaultActors
	if first != nil {
		n = *first
	}
	if err := social.ValidateFirst(n); err != nil {
		return nil, err
	}
	// The read brought as many actors as the selection asks for at most
	// (readpath.ActorsWanted).
	return usersByID(ctx, obj.Actors[:min(n, len(obj.Actors))])
}

// loadComment is a comment the viewer may see (Query.comment), or nil.
func loadComment(ctx context.Context, id string) (*social.Comment, error) {
	c, err := loader.For(ctx).Comments.Load(ctx, id)
	if c == nil || err != nil {
		return nil, err
	}
	// A comment is visible exactly when its post is.
	p, err := loader.For(ctx).Posts.Load(ctx, c.PostID)
	if p == nil || err != nil {
		return nil, err
	}
	return c, nil
}

// audienceOf is a post's audience list of kind vis (Post.onlyTo,
// Post.notTo): shown to its author only, null for anyone else.
func (r *Resolver) audienceOf(ctx context.Context, obj *social.Post, vis social.Visibility) ([]*social.User, error) {
	a, ok, err := r.audience(ctx, obj)
	if !ok || err != nil || obj.Visibility != vis {
		return nil, err
	}
	if vis == social.OnlyTo {
		return usersByID(ctx, a.OnlyTo)
	}
	return usersByID(ctx, a.NotTo)
}

// userFollows tells whether u follows userID, as the viewer may see
// (User.follows).
func userFollows(ctx context.Context, u *social.User, userID string) (bool, error) {
	l := loader.For(ctx)
	rel, err := l.Relations.Load(ctx, u.ID)
	if err != nil || !social.SeesGraphOf(l.IsSelf(u.ID), rel) {
		return false, err
	}
	return l.Follows.Load(ctx, social.FollowPair{Follower: u.ID, Followee: userID})
}

// media are a post's files with addresses for the viewer (Post.media).
func (r *Resolver) media(ctx context.Context, obj *social.Post) []*model.Media {
	// A resolver wired without attachments (a test's) serves no files,
	// so it gives no address either.
	if len(obj.Media) == 0 || r.Attachments == nil {
		return []*model.Media{}
	}
	return r.Attachments.view(obj, social.ViewerID(ctx))
}

// me is the viewer, or nil when anonymous (Query.me).
func me(ctx context.Context) (*social.User, error) {
	v, ok := social.ViewerFrom(ctx)
	if !ok {
		return nil, nil
	}
	return loader.For(ctx).Users.Load(ctx, v.UserID)
}

// deleteAs runs a viewer's deletion of id and answers id.
func deleteAs(ctx context.Context, id string, del func(ctx context.Context, viewerID, id string) error) (string, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return "", err
	}
	if err := del(ctx, v.UserID, id); err != nil {
		return "", err
	}
	return id, nil
}
