package graph

import (
	"context"

	"github.com/socialgw/gateway/graph/readpath"
	"github.com/socialgw/gateway/internal/gqlerr"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/social"
)

// timelineUpdated streams the viewer's new home-timeline posts, from
// since when given.
func (r *Resolver) timelineUpdated(ctx context.Context, since *string) (<-chan *social.Post, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	if r.Live == nil {
		return nil, social.Errorf(social.Internal, "live timelines are off in this process")
	}
	var after string
	if since != nil {
		after = *since
	}
	posts, end, err := r.Live.Stream(ctx, v, after)
	if err != nil {
		return nil, err
	}
	gqlerr.OnStreamEnd(ctx, end)
	return posts, nil
}

// notificationAdded streams the viewer's new notifications, from since
// when given.
func (r *Resolver) notificationAdded(ctx context.Context, since *string) (<-chan *social.Notification, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return nil, err
	}
	if r.LiveNotes == nil {
		return nil, social.Errorf(social.Internal, "live notifications are off in this process")
	}
	notes, end, err := r.LiveNotes.Stream(ctx, v, deref(since), readpath.ActorsWanted(ctx, false))
	if err != nil {
		return nil, err
	}
	gqlerr.OnStreamEnd(ctx, end)
	return shownLive(ctx, notes), nil
}

// shownLive passes on the notifications of in that a page of
// notifications would show (readpath.ShownNotes: not those raised only by
// accounts readers cannot see, such as suspended ones), each checked with
// loaders of its own, so no cache outlives the event it was read for. A
// check that fails passes the notification on: its actors then answer
// the error.
func shownLive(ctx context.Context, in <-chan *social.Notification) <-chan *social.Notification {
	out := make(chan *social.Notification)
	go func() {
		defer close(out)
		for n := range in {
			fresh := loader.With(ctx, loader.For(ctx).Fresh())
			if kept, _, err := readpath.ShownNotes(fresh, []*social.Notification{n}, []string{n.ID}); err == nil && len(kept) == 0 {
				continue
			}
			select {
			case out <- n:
			case <-ctx.Done():
				return // the stream, which sends on in, ends with ctx too
			}
		}
	}()
	return out
}
