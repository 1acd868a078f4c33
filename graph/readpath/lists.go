package readpath

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Lists of users (followers, following, common following, likers) and of
// comments are read through the request's list loader, keyed by parent and
// page arguments, and their users through the details loader.
//
// A loader alone would batch a level's lists only when all their resolvers
// start within its wait window, which a busy machine does not promise. So
// a resolver that returns objects (a timeline page, a list of users, a
// page of comments) reads ahead: it walks its selection down, level by
// level, and loads the lists of every object of a level, and then their
// users, with one LoadAll each (readLists). The resolvers below then find
// their lists and users in the loaders' caches. A page's round trips thus
// grow with the depth of its lists, not with their lengths or number.

// userWants reads what a selection of User fields needs beyond the profile
// (fieldRule.user).
func userWants(oc *graphql.OperationContext, sel selection) readplan.UserWants {
	w := readplan.UserWants{Profiles: true}
	for _, f := range sel.fields(oc, "User") {
		u := ruleOf("User", f).user
		w.Counts = w.Counts || u.Counts
		w.Relations = w.Relations || u.Relations
	}
	return w
}

// users loads users with what sel asks of them through the details loader
// (one batch for the list, none when a read-ahead already loaded them) and
// returns them (nil for missing ones).
func (batched) users(ctx context.Context, ids []string, sel selection) ([]*social.User, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	w := userWants(graphql.GetOperationContext(ctx), sel)
	keys := make([]loader.UserKey, len(ids))
	for i, id := range ids {
		keys[i] = loader.UserKey{ID: id, Wants: w}
	}
	// At once rather than through the loader's window: a read-ahead below
	// then finds them read (objectDetails).
	return loader.For(ctx).FetchDetails(ctx, keys)
}

// UserList resolves a list of users below an object.
func (r *Reader) UserList(ctx context.Context, k readplan.ListKey, first *int, after *string) (*model.UserConnection, error) {
	p, err := social.NewPageRequest(first, after)
	if err != nil {
		return nil, err
	}
	k.Page = p
	pg, err := loader.For(ctx).Lists.Load(ctx, k)
	if err != nil {
		return nil, err
	}
	return r.userConnection(ctx, pg.Users)
}

// userConnection builds a page of users from their ids; users that
// vanished between the two reads are left out.
func (r *Reader) userConnection(ctx context.Context, c social.Connection[string]) (*model.UserConnection, error) {
	oc := graphql.GetOperationContext(ctx)
	sel := fieldSel(graphql.GetFieldContext(ctx).Field).nodes(oc, "UserConnection", "UserEdge")
	users, err := r.ahead.users(ctx, c.Items, sel)
	if err != nil {
		return nil, err
	}
	edges := make([]*model.UserEdge, 0, len(users))
	ids := make([]string, 0, len(users))
	for i, u := range users {
		if u != nil {
			edges = append(edges, &model.UserEdge{Cursor: c.Cursors[i], Node: u})
			ids = append(ids, u.ID)
		}
	}
	r.ahead.lists(ctx, []objects{{typ: "User", users: ids, sel: sel}})
	return &model.UserConnection{Edges: edges, PageInfo: PageInfo(c), TotalCount: c.Total}, nil
}

// CommentList resolves Post.comments: from the first comments a timeline
// page fetch brought along when it did, else through the list loader.
func (r *Reader) CommentList(ctx context.Context, postID string, first *int, after *string) (*model.CommentConnection, error) {
	p, err := social.NewPageRequest(first, after)
	if err != nil {
		return nil, err
	}
	l := loader.For(ctx)
	if c, ok := l.CommentPage(postID, p); ok {
		return r.commentConnection(ctx, c, true)
	}
	pg, err := l.Lists.Load(ctx, readplan.ListKey{List: readplan.ListComments, Parent: postID, Page: p})
	if err != nil {
		return nil, err
	}
	return r.commentConnection(ctx, pg.Comments, false)
}

// commentConnection builds a page of comments and loads their authors
// (with what the query asks of them) in one round trip, unless a timeline
// page fetch already brought them (prefetched).
func (r *Reader) commentConnection(ctx context.Context, c social.Connection[*social.Comment], prefetched bool) (*model.CommentConnection, error) {
	oc := graphql.GetOperationContext(ctx)
	sel := fieldSel(graphql.GetFieldContext(ctx).Field).nodes(oc, "CommentConnection", "CommentEdge")
	if err := r.ahead.comments(ctx, c.Items, sel.child(oc, "Comment", "author"), prefetched); err != nil {
		return nil, err
	}
	c, err := shownComments(ctx, c)
	if err != nil {
		return nil, err
	}
	edges := make([]*model.CommentEdge, len(c.Items))
	for i, cm := range c.Items {
		edges[i] = &model.CommentEdge{Cursor: c.Cursors[i], Node: cm}
	}
	r.ahead.lists(ctx, []objects{{typ: "Comment", comments: c.Items, sel: sel}})
	return &model.CommentConnection{Edges: edges, PageInfo: PageInfo(c), TotalCount: c.Total}, nil
}

// ReplyList resolves Comment.replies through the list loader (the
// read-ahead of the comments' level has read it for every comment).
func (r *Reader) ReplyList(ctx context.Context, c *social.Comment, first *int, after *string) (*model.CommentConnection, error) {
	p, err := social.NewPageRequest(first, after)
	if err != nil {
		return nil, err
	}
	pg, err := loader.For(ctx).Lists.Load(ctx, readplan.ListKey{List: readplan.ListReplies, Parent: c.ID, With: c.PostID, Page: p})
	if err != nil {
		return nil, err
	}
	return r.commentConnection(ctx, pg.Comments, false)
}

// comments primes the loaders with a page of comments and loads their
// authors with what authorSel asks of them, unless a page fetch already
// did (prefetched).
func (b batched) comments(ctx context.Context, cs []*social.Comment, authorSel selection, prefetched bool) error {
	l := loader.For(ctx)
	for _, cm := range cs {
		l.Comments.Prime(cm.ID, cm)
	}
	if authorSel == nil || prefetched {
		return nil
	}
	_, err := b.users(ctx, commentAuthors(cs), authorSel)
	return err
}

func commentAuthors(cs []*social.Comment) []string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = c.AuthorID
	}
	return unique(ids)
}

// objects are objects of one GraphQL type that share one selection: the
// unit of the list read-ahead.
type objects struct {
	typ      string // "Post", "User" or "Comment"
	posts    []*social.Post
	users    []string
	comments []*social.Comment
	sel      selection
}

// ids are the ids of the objects, the parents of their lists.
func (o objects) ids() []string {
	switch o.typ {
	case "User":
		return o.users
	case "Post":
		ids := make([]string, len(o.posts))
		for i, p := range o.posts {
			ids[i] = p.ID
		}
		return ids
	}
	return nil // comments' lists (replies) are keyed by comment and post: planLevel
}

// lists loads, level by level, the lists below the objects of level and
// the users in them: at each level one store call for every list of every
// object (and one for the users' own pages of posts, beside it), then one
// for the users in those lists, fetched at once rather than when a
// loader's window expires, so a page's round trips do not depend on
// timing. Errors are left to the resolvers, which load a failed key again
// and report it where it belongs.
func (b batched) lists(ctx context.Context, level []objects) {
	oc := graphql.GetOperationContext(ctx)
	l := loader.For(ctx)
	for len(level) > 0 {
		level = b.follow(ctx, oc, level)
		plan := b.planLevel(oc, l, level)
		details := objectDetails(oc, level)
		if len(plan.keys) == 0 && len(plan.pageKeys) == 0 && len(details) == 0 {
			return
		}
		var pages []readplan.ListPage
		var userPages []*readplan.Page
		var wg sync.WaitGroup
		if len(plan.pageKeys) > 0 {
			wg.Go(func() { userPages = l.FetchUserPages(ctx, plan.pageKeys) })
		}
		if len(details) > 0 {
			wg.Go(func() { _, _ = l.FetchDetails(ctx, details) })
		}
		if len(plan.keys) > 0 {
			pages = l.FetchLists(ctx, plan.keys)
		}
		wg.Wait()
		level = b.nextLevel(ctx, oc, l, plan, pages, userPages)
	}
}

// objectDetails are the users of a level that the query asks more of
// than their profile (counters, relations to the viewer): a post's or a
// comment's author. Users in lists had theirs read with the list; these
// are read beside the level's lists, in the same round trip, rather than
// by each field's loader when its window expires.
func objectDetails(oc *graphql.OperationContext, level []objects) []loader.UserKey {
	var keys []loader.UserKey
	for _, g := range level {
		if g.typ != "User" || len(g.users) == 0 {
			continue
		}
		if w := userWants(oc, g.sel); w.Counts || w.Relations {
			keys = appendUserKeys(keys, g.users, w)
		}
	}
	return keys
}

// levelPlan is what one level of the read-ahead reads: list pages (keys)
// and users' pages of posts (pageKeys), each field's keys a span.
type levelPlan struct {
	keys      []readplan.ListKey
	spans     []span
	pageKeys  []readplan.UserPageKey
	pageSpans []span
}

// span is keys[from:to]: the pages of one field, one for each object.
type span struct {
	from, to   int
	list       readplan.List
	sel        selection // of the field's nodes
	prefetched bool      // comments whose authors a page fetch brought
}

// planLevel lists the pages the fields of a level's objects ask for.
func (b batched) planLevel(oc *graphql.OperationContext, l *loader.Loaders, level []objects) levelPlan {
	var p levelPlan
	for _, g := range level {
		for _, f := range g.sel.fields(oc, g.typ) {
			rule := ruleOf(g.typ, f)
			if rule.posts {
				k, ok := listArgs(oc, f, "")
				if !ok {
					continue // the resolver reports the bad argument
				}
				w := timelineWants(oc, fieldSel(f))
				sp := span{from: len(p.pageKeys), sel: fieldSel(f).nodes(oc, "Timeline", "TimelineEdge")}
				for _, id := range g.users {
					p.pageKeys = append(p.pageKeys, readplan.UserPageKey{User: id, Page: k.Page, Wants: w})
				}
				sp.to = len(p.pageKeys)
				p.pageSpans = append(p.pageSpans, sp)
				continue
			}
			list := rule.list
			if list == "" {
				continue
			}
			k, ok := listArgs(oc, f, list)
			if !ok {
				continue
			}
			sp := span{from: len(p.keys), list: list, prefetched: list == readplan.ListComments}
			if commentList(list) {
				sp.sel = fieldSel(f).nodes(oc, "CommentConnection", "CommentEdge")
			} else {
				sp.sel = fieldSel(f).nodes(oc, "UserConnection", "UserEdge")
			}
			if list == readplan.ListReplies {
				// A comment's answers are in its post's slot.
				for _, c := range g.comments {
					k.Parent, k.With = c.ID, c.PostID
					p.keys = append(p.keys, k)
				}
				sp.to = len(p.keys)
				p.spans = append(p.spans, sp)
				continue
			}
			for _, id := range g.ids() {
				k.Parent = id
				if list == readplan.ListComments {
					// A timeline page fetch may have brought them.
					if c, ok := l.CommentPage(id, k.Page); ok {
						l.PrimeList(k, readplan.ListPage{Comments: c})
					} else {
						sp.prefetched = false
					}
				}
				p.keys = append(p.keys, k)
			}
			sp.to = len(p.keys)
			p.spans = append(p.spans, sp)
		}
	}
	return p
}

// nextLevel primes the loaders with what a level read, fetches the users
// its lists name, and returns the objects of the level below.
func (b batched) nextLevel(ctx context.Context, oc *graphql.OperationContext, l *loader.Loaders, p levelPlan, pages []readplan.ListPage, userPages []*readplan.Page) []objects {
	var next []objects
	for _, sp := range p.pageSpans {
		var posts []*social.Post
		for _, pg := range userPages[sp.from:sp.to] {
			if pg != nil {
				b.primePage(ctx, pg)
				posts = append(posts, pg.Posts.Items...)
			}
		}
		next = append(next, objects{typ: "Post", posts: posts, sel: sp.sel})
	}
	var users []loader.UserKey
	for _, sp := range p.spans {
		if commentList(sp.list) {
			var cs []*social.Comment
			for _, pg := range pages[sp.from:sp.to] {
				cs = append(cs, pg.Comments.Items...)
			}
			for _, c := range cs {
				l.Comments.Prime(c.ID, c)
			}
			if authorSel := sp.sel.child(oc, "Comment", "author"); authorSel != nil && !sp.prefetched {
				users = appendUserKeys(users, commentAuthors(cs), userWants(oc, authorSel))
			}
			next = append(next, objects{typ: "Comment", comments: cs, sel: sp.sel})
			continue
		}
		var ids []string
		for _, pg := range pages[sp.from:sp.to] {
			ids = append(ids, pg.Users.Items...)
		}
		ids = unique(ids)
		users = appendUserKeys(users, ids, userWants(oc, sp.sel))
		next = append(next, objects{typ: "User", users: ids, sel: sp.sel})
	}
	if len(users) > 0 {
		_, _ = l.FetchDetails(ctx, users)
	}
	return next
}

// commentList reports a list of comments (a post's, or a comment's
// answers), whose nodes are Comments.
func commentList(l readplan.List) bool {
	return l == readplan.ListComments || l == readplan.ListReplies
}

func appendUserKeys(keys []loader.UserKey, ids []string, w readplan.UserWants) []loader.UserKey {
	for _, id := range ids {
		keys = append(keys, loader.UserKey{ID: id, Wants: w})
	}
	return keys
}

// follow adds to a level the objects its objects' object fields lead to
// (fieldRule.reach: a post's author and original, a comment's author and
// post): they cost no list read, and their own lists belong to the same
// level.
func (b batched) follow(ctx context.Context, oc *graphql.OperationContext, level []objects) []objects {
	out := level[:0:0]
	for len(level) > 0 {
		g := level[0]
		level = level[1:]
		out = append(out, g)
		for _, f := range g.sel.fields(oc, g.typ) {
			reach := ruleOf(g.typ, f).reach
			if reach == nil || len(f.Selections) == 0 {
				continue
			}
			if next, ok := reach(ctx, oc, g, f); ok {
				level = append(level, next)
			}
		}
	}
	return out
}

// reachAuthors leads from posts or comments to their authors.
func reachAuthors(_ context.Context, _ *graphql.OperationContext, g objects, f graphql.CollectedField) (objects, bool) {
	if g.typ == "Comment" {
		return objects{typ: "User", users: commentAuthors(g.comments), sel: fieldSel(f)}, true
	}
	ids := make([]string, len(g.posts))
	for i, p := range g.posts {
		ids[i] = p.AuthorID
	}
	return objects{typ: "User", users: unique(ids), sel: fieldSel(f)}, true
}

// reachPosts leads from posts to their originals, or from comments to
// their posts, when the selection has lists below them (else the posts
// are left to their resolvers).
func reachPosts(ctx context.Context, oc *graphql.OperationContext, g objects, f graphql.CollectedField) (objects, bool) {
	if !hasLists(oc, fieldSel(f), "Post") {
		return objects{}, false
	}
	var ids []string
	for _, p := range g.posts {
		if p.RepostOfID != "" {
			ids = append(ids, p.RepostOfID)
		}
	}
	for _, c := range g.comments {
		ids = append(ids, c.PostID)
	}
	var found []*social.Post
	for _, p := range loader.For(ctx).FetchPosts(ctx, unique(ids)) {
		if p != nil {
			found = append(found, p)
		}
	}
	return objects{typ: "Post", posts: found, sel: fieldSel(f)}, true
}

// hasLists reports whether a selection of typ has a list field somewhere
// below it, through object fields too.
func hasLists(oc *graphql.OperationContext, sel selection, typ string) bool {
	for _, f := range sel.fields(oc, typ) {
		r := ruleOf(typ, f)
		if r.list != "" || r.posts || (r.reach != nil && hasLists(oc, fieldSel(f), valueType(f))) {
			return true
		}
	}
	return false
}

// listArgs reads a list field's arguments as its resolver will, with
// gqlgen's coercion; ok is false when they are invalid.
func listArgs(oc *graphql.OperationContext, f graphql.CollectedField, list readplan.List) (readplan.ListKey, bool) {
	args := f.ArgumentMap(oc.Variables)
	k := readplan.ListKey{List: list}
	first, ok := optionalInt(args["first"])
	if !ok {
		return k, false
	}
	var after *string
	if v := args["after"]; v != nil {
		a, err := graphql.UnmarshalString(v)
		if err != nil {
			return k, false
		}
		after = &a
	}
	p, err := social.NewPageRequest(first, after)
	if err != nil {
		return k, false
	}
	k.Page = p
	if list == readplan.ListCommonFollowing {
		with, err := graphql.UnmarshalID(args["with"])
		if err != nil {
			return k, false
		}
		k.With = with
	}
	return k, true
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
