package graph

import (
	"context"

	"github.com/socialgw/gateway/internal/social"
)

// The viewer's own mutations that need the viewer first.

// markRead marks the viewer's notifications read up to upTo.
func (r *Resolver) markRead(ctx context.Context, upTo *string) (int, error) {
	v, err := social.RequireViewer(ctx)
	if err != nil {
		return 0, err
	}
	return r.Notes.MarkNotificationsRead(ctx, v.UserID, deref(upTo))
}
