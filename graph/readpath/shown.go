package readpath

import (
	"context"

	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/social"
)

// shownComments leaves out the comments whose authors readers cannot see
// (a suspended account's: the users loader has them nil). The authors
// are in the loader's cache when the selection asks for them (the
// read-ahead above); else this costs one batch.
func shownComments(ctx context.Context, c social.Connection[*social.Comment]) (social.Connection[*social.Comment], error) {
	ids := make([]string, len(c.Items))
	for i, cm := range c.Items {
		ids[i] = cm.AuthorID
	}
	users, err := loader.For(ctx).Users.LoadAll(ctx, ids)
	if err != nil {
		return c, err
	}
	out := c
	out.Items, out.Cursors = nil, nil
	for i, u := range users {
		if u != nil {
			out.Items = append(out.Items, c.Items[i])
			out.Cursors = append(out.Cursors, c.Cursors[i])
		}
	}
	return out, nil
}

// ShownNotes leaves out the notifications none of whose first actors
// readers can see (suspended accounts': the users loader has them nil),
// with one batch of the users loader, whose cache Notification.actors
// then reads.
func ShownNotes(ctx context.Context, notes []*social.Notification, cursors []string) ([]*social.Notification, []string, error) {
	var ids []string
	for _, n := range notes {
		ids = append(ids, n.Actors...)
	}
	users, err := loader.For(ctx).Users.LoadAll(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	var keptNotes []*social.Notification
	var keptCursors []string
	at := 0
	for i, n := range notes {
		shown := len(n.Actors) == 0
		for _, u := range users[at : at+len(n.Actors)] {
			shown = shown || u != nil
		}
		at += len(n.Actors)
		if shown {
			keptNotes, keptCursors = append(keptNotes, n), append(keptCursors, cursors[i])
		}
	}
	return keptNotes, keptCursors, nil
}
