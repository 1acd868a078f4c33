package readpath

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/socialgw/gateway/internal/social"
)

// ActorsWanted is how many actors the current field's notifications are
// asked for at most (its selection is a NotificationConnection's with
// connection set, else a Notification's), so that one read brings them
// all; social.DefaultActors at least, even when the selection shows none:
// the first actors are what tells a notification raised only by accounts
// readers cannot see, which ShownNotes leaves out.
func ActorsWanted(ctx context.Context, connection bool) int {
	oc := graphql.GetOperationContext(ctx)
	sel := fieldSel(graphql.GetFieldContext(ctx).Field)
	if connection {
		sel = sel.nodes(oc, "NotificationConnection", "NotificationEdge")
	}
	n := social.DefaultActors
	for _, f := range sel.fields(oc, "Notification") {
		if f.Name != "actors" {
			continue
		}
		k := social.DefaultActors
		if v, ok := intArg(f.ArgumentMap(oc.Variables)["first"]); ok {
			k = v
		}
		n = max(n, min(k, social.MaxFirst))
	}
	return n
}
