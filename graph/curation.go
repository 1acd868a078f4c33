package graph

import (
	"context"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Curation is bookmarks, pinned posts and lists. Its pages fetch their
// posts with what the query asks for (w), as the home page does.
type Curation interface {
	Bookmark(ctx context.Context, viewerID, postID string) error
	Unbookmark(ctx context.Context, viewerID, postID string) error
	BookmarksPage(ctx context.Context, viewerID string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error)
	Pin(ctx context.Context, viewerID, postID string) error
	Unpin(ctx context.Context, viewerID, postID string) error
	CreateList(ctx context.Context, ownerID, title string) (*social.List, error)
	RenameList(ctx context.Context, ownerID, lid, title string) (*social.List, error)
	DeleteList(ctx context.Context, ownerID, lid string) error
	AddToList(ctx context.Context, ownerID, lid string, users []string) (*social.List, error)
	RemoveFromList(ctx context.Context, ownerID, lid string, users []string) (*social.List, error)
	Lists(ctx context.Context, ownerID string) ([]*social.List, error)
	ListPage(ctx context.Context, ownerID, lid string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error)
}

// bookmarks returns a page of the viewer's bookmarks.
func (r *Resolver) bookmarks(ctx context.Context, first *int, after *string) (*model.Timeline, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	p, err := social.NewPageRequest(first, after)
	if err != nil {
		return nil, err
	}
	page, err := r.Curation.BookmarksPage(ctx, v.UserID, p, r.read.PageWants(ctx))
	if err != nil {
		return nil, err
	}
	return r.read.Timeline(ctx, page), nil
}

// listTimeline returns a page of one of the viewer's lists.
func (r *Resolver) listTimeline(ctx context.Context, listID string, first *int, after, before *string) (*model.Timeline, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	p, err := social.NewTwoWayRequest(first, after, before)
	if err != nil {
		return nil, err
	}
	page, err := r.Curation.ListPage(ctx, v.UserID, listID, p, r.read.PageWants(ctx))
	if err != nil {
		return nil, err
	}
	return r.read.Timeline(ctx, page), nil
}

// lists returns the viewer's lists.
func (r *Resolver) lists(ctx context.Context) ([]*social.List, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	return r.Curation.Lists(ctx, v.UserID)
}

// listChange runs a change of the viewer's lists.
func (r *Resolver) listChange(ctx context.Context, change func(ownerID string) (*social.List, error)) (*social.List, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	return change(v.UserID)
}

// deleteList deletes one of the viewer's lists and answers its id.
func (r *Resolver) deleteList(ctx context.Context, id string) (string, error) {
	_, err := r.listChange(ctx, func(owner string) (*social.List, error) { return nil, r.Curation.DeleteList(ctx, owner, id) })
	return id, err
}

// listMembers pages a list's members; a list reaches only its owner, so
// the page is of the viewer's list.
func (r *Resolver) listMembers(ctx context.Context, l *social.List, first *int, after *string) (*model.UserConnection, error) {
	return r.read.UserList(ctx, readplan.ListKey{List: readplan.ListMembers, Parent: l.OwnerID + ":" + l.ID}, first, after)
}

// followRequests pages the users asking to follow the viewer.
func (r *Resolver) followRequests(ctx context.Context, first *int, after *string) (*model.UserConnection, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	return r.read.UserList(ctx, readplan.ListKey{List: readplan.ListFollowRequests, Parent: v.UserID}, first, after)
}

// pinnedPosts returns a user's pinned posts that the viewer may see: the
// ids of a level's users in one batch, their posts in the next.
func pinnedPosts(ctx context.Context, u *social.User) ([]*social.Post, error) {
	l := loader.For(ctx)
	ids, err := l.Pins.Load(ctx, u.ID)
	if err != nil || len(ids) == 0 {
		return []*social.Post{}, err
	}
	posts, err := l.Posts.LoadAll(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := make([]*social.Post, 0, len(posts))
	for _, p := range posts {
		if p != nil {
			out = append(out, p)
		}
	}
	return out, nil
}
