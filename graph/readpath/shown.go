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
