package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/social"
)

// Lists of users (followers, following, common following, likers) and of
// comments look ahead like timeline pages: the resolver reads what the
// list's nodes ask for and loads it for the whole list in one pipeline,
// then primes the loaders. Batching by the loaders' time window alone would
// split a long list into several batches whenever its elements' resolvers
// do not all start within the window.

// userWants reads what a selection of User fields needs beyond the profile.
func userWants(oc *graphql.OperationContext, sel ast.SelectionSet) social.UserWants {
	w := social.UserWants{Profiles: true}
	for _, f := range graphql.CollectFields(oc, sel, []string{"User"}) {
		switch f.Name {
		case "followersCount", "followingCount":
			w.Counts = true
		case "postsCount":
			w.Counts, w.Relations = true, true
		case "viewerFollows", "followsViewer", "viewerBlocked", "viewerMuted":
			w.Relations = true
		}
	}
	return w
}

// nodeSelections returns the selections of edges.node under the current
// connection field (of any connection type).
func nodeSelections(oc *graphql.OperationContext, sel ast.SelectionSet, conn, edge string) ast.SelectionSet {
	var out ast.SelectionSet
	for _, edges := range graphql.CollectFields(oc, sel, []string{conn}) {
		if edges.Name != "edges" {
			continue
		}
		for _, node := range graphql.CollectFields(oc, edges.Selections, []string{edge}) {
			if node.Name == "node" {
				out = append(out, node.Selections...)
			}
		}
	}
	return out
}

// users loads users with what sel asks of them in one round trip, primes
// the loaders, and returns the users (nil for missing ones).
func (b batched) users(ctx context.Context, ids []string, sel ast.SelectionSet) ([]*social.User, error) {
	l := loader.For(ctx)
	if len(ids) == 0 {
		return nil, nil
	}
	w := userWants(graphql.GetOperationContext(ctx), sel)
	d, err := b.profiles.UserDetails(ctx, l.ViewerID, ids, w)
	if err != nil {
		return nil, err
	}
	for i, id := range ids {
		if u := d.Users[i]; u != nil {
			l.Users.Prime(id, u)
		}
		if w.Counts {
			l.UserCounts.Prime(id, d.Counts[i])
		}
		if w.Relations {
			l.Relations.Prime(id, d.Relations[i])
		}
	}
	return d.Users, nil
}

// userConnection builds a page of users from their ids; users that
// vanished between the two reads are left out.
func (r *Resolver) userConnection(ctx context.Context, c social.Connection[string]) (*model.UserConnection, error) {
	oc := graphql.GetOperationContext(ctx)
	sel := nodeSelections(oc, graphql.GetFieldContext(ctx).Field.Selections, "UserConnection", "UserEdge")
	users, err := r.ahead.users(ctx, c.Items, sel)
	if err != nil {
		return nil, err
	}
	edges := make([]*model.UserEdge, 0, len(users))
	for i, u := range users {
		if u != nil {
			edges = append(edges, &model.UserEdge{Cursor: c.Cursors[i], Node: u})
		}
	}
	return &model.UserConnection{Edges: edges, PageInfo: pageInfo(c), TotalCount: c.Total}, nil
}

// commentConnection builds a page of comments and loads their authors
// (with what the query asks of them) in one round trip, unless a timeline
// page fetch already brought them (prefetched).
func (r *Resolver) commentConnection(ctx context.Context, c social.Connection[*social.Comment], prefetched bool) (*model.CommentConnection, error) {
	oc := graphql.GetOperationContext(ctx)
	var authorSel ast.SelectionSet
	for _, f := range graphql.CollectFields(oc, nodeSelections(oc, graphql.GetFieldContext(ctx).Field.Selections, "CommentConnection", "CommentEdge"), []string{"Comment"}) {
		if f.Name == "author" {
			authorSel = append(authorSel, f.Selections...)
		}
	}
	edges := make([]*model.CommentEdge, len(c.Items))
	for i, cm := range c.Items {
		edges[i] = &model.CommentEdge{Cursor: c.Cursors[i], Node: cm}
	}
	if err := r.ahead.comments(ctx, c.Items, authorSel, prefetched); err != nil {
		return nil, err
	}
	return &model.CommentConnection{Edges: edges, PageInfo: pageInfo(c), TotalCount: c.Total}, nil
}

// comments primes the loaders with a page of comments and loads their
// authors with what authorSel asks of them, unless a page fetch already
// did (prefetched).
func (b batched) comments(ctx context.Context, cs []*social.Comment, authorSel ast.SelectionSet, prefetched bool) error {
	l := loader.For(ctx)
	authors := make([]string, 0, len(cs))
	for _, cm := range cs {
		l.Comments.Prime(cm.ID, cm)
		authors = append(authors, cm.AuthorID)
	}
	if authorSel == nil || prefetched {
		return nil
	}
	_, err := b.users(ctx, unique(authors), authorSel)
	return err
}

func unique(ids []string) []string {
	seen := make(map[string]bool, len(ids))
	out := ids[:0:0]
	for _, id := range ids {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
