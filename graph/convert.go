package graph

import (
	"context"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/graph/readpath"
	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/social"
)

// authPayload also lets the rest of the response see the account as its
// owner does (its e-mail address), since the request carried no token.
func authPayload(ctx context.Context, r *auth.Result) *model.AuthPayload {
	loader.For(ctx).ActAs(r.User.ID)
	return &model.AuthPayload{AccessToken: r.AccessToken, ExpiresAt: r.ExpiresAt, RefreshToken: r.RefreshToken, User: r.User}
}

// loadUser returns a user that must exist, or NOT_FOUND.
func loadUser(ctx context.Context, id string) (*social.User, error) {
	u, err := loader.For(ctx).Users.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if u == nil {
		return nil, social.Errorf(social.NotFound, "user %s not found", id)
	}
	return u, nil
}

// loadPost returns a post the viewer may see, or NOT_FOUND.
func loadPost(ctx context.Context, id string) (*social.Post, error) {
	p, err := loader.For(ctx).Posts.Load(ctx, id)
	if err != nil {
		return nil, err
	}
	if p == nil {
		return nil, social.Errorf(social.NotFound, "post %s not found", id)
	}
	return p, nil
}

func usersByID(ctx context.Context, ids []string) ([]*social.User, error) {
	users, err := loader.For(ctx).Users.LoadAll(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := users[:0]
	for _, u := range users {
		if u != nil {
			out = append(out, u)
		}
	}
	return out, nil
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// newPost is createPost's input as the domain takes it: a null content is
// empty (a plain repost, when repostOf is set).
func newPost(in model.CreatePostInput) social.NewPost {
	p := social.NewPost{OnlyTo: in.OnlyTo, NotTo: in.NotTo, Sensitive: in.Sensitive != nil && *in.Sensitive}
	if in.SpoilerText != nil {
		p.SpoilerText = *in.SpoilerText
	}
	if in.Content != nil {
		p.Content = *in.Content
	}
	if in.RepostOf != nil {
		p.RepostOf = *in.RepostOf
	}
	if in.Source != nil {
		p.Source = *in.Source
	}
	if l := in.Location; l != nil {
		p.Location = &social.Location{Latitude: l.Latitude, Longitude: l.Longitude}
		if l.Name != nil {
			p.Location.Name = *l.Name
		}
	}
	// The files' alt texts, for the post's checks before any file is
	// stored; Attachments.save replaces these with the stored files.
	for _, m := range in.Media {
		var alt string
		if m != nil && m.Alt != nil {
			alt = *m.Alt
		}
		p.Media = append(p.Media, social.Media{Alt: alt})
	}
	return p
}

// locationOf is a post's location as the schema shows it.
func locationOf(p *social.Post) *model.Location {
	l := p.Location
	if l == nil {
		return nil
	}
	return &model.Location{Latitude: l.Latitude, Longitude: l.Longitude, Name: optional(l.Name)}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// notificationConnection is a page of notifications as the schema has it.
func notificationConnection(page social.Notifications) *model.NotificationConnection {
	edges := make([]*model.NotificationEdge, len(page.Items))
	for i, n := range page.Items {
		edges[i] = &model.NotificationEdge{Cursor: page.Cursors[i], Node: n}
	}
	return &model.NotificationConnection{Edges: edges, PageInfo: readpath.PageInfo(page.Connection), UnreadCount: page.Unread}
}

// orNull is a nullable String as a resolver returns it.
func orNull(s string, ok bool) *string {
	if !ok {
		return nil
	}
	return &s
}
