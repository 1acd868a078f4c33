package readpath

import (
	"context"

	"github.com/99designs/gqlgen/graphql"

	"github.com/socialgw/gateway/graph/model"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Timeline pages are fetched ahead of their fields: the resolver of a
// Timeline field reads its own selection to learn what the posts' fields
// will need (authors, counters, likes, first comments, reposted originals),
// fetches the page with exactly that in a fixed number of pipelined round
// trips, and primes the request's loaders. The nested resolvers then find
// everything cached and neither wait for a batch nor query again.

// pageWants reads what the selection of the current Timeline field asks of
// its posts.
func (batched) pageWants(ctx context.Context) readplan.PageWants {
	return timelineWants(graphql.GetOperationContext(ctx), fieldSel(graphql.GetFieldContext(ctx).Field))
}

// timelineWants reads what a selection of Timeline fields asks of its posts.
func timelineWants(oc *graphql.OperationContext, sel selection) readplan.PageWants {
	var w readplan.PageWants
	postWants(oc, sel.nodes(oc, "Timeline", "TimelineEdge"), &w, false)
	return w
}

// postWants adds what a selection of Post fields needs (fieldRule.page);
// original is set for the selection under repostOf.
func postWants(oc *graphql.OperationContext, sel selection, w *readplan.PageWants, original bool) {
	for _, f := range sel.fields(oc, "Post") {
		if want := ruleOf("Post", f).page; want != nil {
			want(oc, f, w, original)
		}
	}
}

// The page wants of Post's fields (fields.go).

var (
	wantAuthors = wantAlike(func(w *readplan.PageWants) *bool { return &w.Authors }, func(w *readplan.PageWants) *bool { return &w.OriginalAuthors })
	wantCounts  = wantAlike(func(w *readplan.PageWants) *bool { return &w.Counts }, func(w *readplan.PageWants) *bool { return &w.OriginalCounts })
	wantMarks   = wantAlike(func(w *readplan.PageWants) *bool { return &w.Marks }, func(w *readplan.PageWants) *bool { return &w.OriginalMarks })
)

// wantAlike is the page want of a field read alike for the page's posts
// (the flag own picks) and for reposted originals (orig).
func wantAlike(own, orig func(*readplan.PageWants) *bool) func(*graphql.OperationContext, graphql.CollectedField, *readplan.PageWants, bool) {
	return func(_ *graphql.OperationContext, _ graphql.CollectedField, w *readplan.PageWants, original bool) {
		if original {
			*orig(w) = true
		} else {
			*own(w) = true
		}
	}
}

// wantComments asks for the first comments of the page's own posts (and
// their authors when selected), as many as the largest first argument
// that reads from the top.
func wantComments(oc *graphql.OperationContext, f graphql.CollectedField, w *readplan.PageWants, original bool) {
	args := f.ArgumentMap(oc.Variables)
	if original || args["after"] != nil {
		return
	}
	first := social.DefaultFirst
	if n, ok := intArg(args["first"]); ok {
		first = n
	}
	if first >= 1 && first <= social.MaxFirst {
		w.Comments = max(w.Comments, first)
	}
	if fieldSel(f).nodes(oc, "CommentConnection", "CommentEdge").child(oc, "Comment", "author") != nil {
		w.CommentAuthors = true
	}
}

// wantOriginal asks for the reposted originals of the page's own posts,
// with what the selection under repostOf needs of them.
func wantOriginal(oc *graphql.OperationContext, f graphql.CollectedField, w *readplan.PageWants, original bool) {
	if !original {
		w.Reposts = true
		postWants(oc, fieldSel(f), w, true)
	}
}

// intArg reads an Int argument with gqlgen's own coercion.
func intArg(v any) (int, bool) {
	if v == nil {
		return 0, false
	}
	n, err := graphql.UnmarshalInt(v)
	return n, err == nil
}

// primePage puts what a page fetch read into the request's loaders.
func (batched) primePage(ctx context.Context, page *readplan.Page) {
	l := loader.For(ctx)
	for _, p := range page.Posts.Items {
		l.PrimePost(p.ID, p)
	}
	for id, p := range page.Originals {
		l.PrimePost(id, p) // nil: deleted or hidden, repostOf reads null
	}
	for id, u := range page.Users {
		if u != nil {
			l.Users.Prime(id, u)
		}
	}
	for id, n := range page.Counts {
		l.PostCounts.Prime(id, n)
	}
	for id, v := range page.Marks {
		l.Marks.Prime(id, v)
	}
	// A mutation field's loaders are its own (FreshLoaders): comment pages
	// primed here cannot outlive a later field's new comment.
	for id, cc := range page.Comments {
		l.PrimeCommentPage(id, cc)
	}
}

// Timeline fetches nothing: it turns a fetched page into a Timeline after
// the read-ahead strategy has primed the loaders with it.
func (r *Reader) Timeline(ctx context.Context, page *readplan.Page) *model.Timeline {
	r.ahead.primePage(ctx, page)
	oc := graphql.GetOperationContext(ctx)
	sel := fieldSel(graphql.GetFieldContext(ctx).Field).nodes(oc, "Timeline", "TimelineEdge")
	r.ahead.lists(ctx, []objects{{typ: "Post", posts: page.Posts.Items, sel: sel}})
	c := page.Posts
	edges := make([]*model.TimelineEdge, len(c.Items))
	for i, p := range c.Items {
		edges[i] = &model.TimelineEdge{Cursor: c.Cursors[i], Node: p}
	}
	return &model.Timeline{Edges: edges, PageInfo: PageInfo(c)}
}

// PageInfo is a connection's page info as the schema has it.
func PageInfo[T any](c social.Connection[T]) *model.PageInfo {
	return &model.PageInfo{HasNextPage: c.HasNext, EndCursor: optional(c.EndCursor()),
		HasPreviousPage: c.HasPrevious, StartCursor: optional(c.StartCursor())}
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
