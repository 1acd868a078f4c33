package graph

import (
	"context"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/graph/readpath"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// graphEdit runs a follow/block/mute style mutation and returns the target
// user, read after the edit (readpath.FreshLoaders).
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
// the edit (readpath.FreshLoaders).
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
	page, err := loader.For(ctx).UserPages.Load(ctx, readplan.UserPageKey{User: userID, Page: p, Wants: r.read.PageWants(ctx)})
	if err != nil {
		return nil, err
	}
	return r.read.Timeline(ctx, page), nil
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

// createPost checks the post, stores its files, then the post; the files
// go again when the post is refused.
func (r *Resolver) createPost(ctx context.Context, input model.CreatePostInput) (*social.Post, error) {
	v, err := r.poster(ctx)
	if err != nil {
		return nil, err
	}
	in := newPost(input)
	// The post's rules, by the post service, before any file is stored.
	if err := r.Posts.CheckPost(in); err != nil {
		return nil, err
	}
	if in.Media, err = r.Attachments.save(ctx, v.UserID, input.Media); err != nil {
		return nil, err
	}
	p, err := r.Posts.CreatePost(ctx, v.UserID, in)
	if err != nil {
		return nil, r.Attachments.discard(ctx, in.Media, err)
	}
	loader.For(ctx).Posts.Prime(p.ID, p)
	return p, nil
}

// userByIDOrName loads the user of exactly one of id and name; an
// unknown name is null, as an unknown id is.
func (r *Resolver) userByIDOrName(ctx context.Context, id *string, name *string) (*social.User, error) {
	switch {
	case (id == nil) == (name == nil):
		return nil, social.Errorf(social.BadUserInput, "give exactly one of id and name")
	case id != nil:
		return loader.For(ctx).Users.Load(ctx, *id)
	}
	uid, err := r.Profiles.UserIDByName(ctx, *name)
	if social.IsCode(err, social.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return loader.For(ctx).Users.Load(ctx, uid)
}

// homeTimeline returns a page of the viewer's home timeline: the one the
// fast path fetched, or one read now.
func (r *Resolver) homeTimeline(ctx context.Context, first *int, after *string, before *string) (*model.Timeline, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	p, err := social.NewTwoWayRequest(first, after, before)
	if err != nil {
		return nil, err
	}
	w := r.read.PageWants(ctx)
	if page, ok := loader.For(ctx).HomePage(p, w); ok { // fetched by the fast path
		return r.read.Timeline(ctx, page), nil
	}
	page, err := r.Posts.HomePage(ctx, v.UserID, p, w)
	if err != nil {
		return nil, err
	}
	return r.read.Timeline(ctx, page), nil
}

// notifications returns a page of the viewer's notifications, with as
// many actors as the selection asks for.
func (r *Resolver) notifications(ctx context.Context, first *int, after *string) (*model.NotificationConnection, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	p, err := social.NewPageRequest(first, after)
	if err != nil {
		return nil, err
	}
	page, err := r.Notes.Notifications(ctx, v.UserID, p, readpath.ActorsWanted(ctx, true))
	if err != nil {
		return nil, err
	}
	if page.Items, page.Cursors, err = readpath.ShownNotes(ctx, page.Items, page.Cursors); err != nil {
		return nil, err
	}
	return notificationConnection(page), nil
}

// postsCount is the number of obj's posts the viewer may see.
func (r *Resolver) postsCount(ctx context.Context, obj *social.User) (int, error) {
	l := loader.For(ctx)
	c, err := l.UserCounts.Load(ctx, obj.ID)
	if err != nil {
		return 0, err
	}
	self := l.ViewerID == obj.ID
	var rel social.Relation
	if !self && l.ViewerID != "" {
		if rel, err = l.Relations.Load(ctx, obj.ID); err != nil {
			return 0, err
		}
	}
	return social.PostsCountFor(c, self, rel), nil
}
