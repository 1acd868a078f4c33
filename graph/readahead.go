package graph

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/handler"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// readAhead is how resolvers read ahead of the fields below them. The
// gateway serves with batched: a list or page resolver reads its own
// selection, fetches what the fields below will need in one pipeline and
// primes the request's loaders. This package's tests also build a variant
// that reads nothing ahead, to compare against (export_test.go); the choice
// is made once, when the handler is built, and no resolver checks a mode.
type readAhead interface {
	// pageWants is what the current Timeline field's page brings along.
	pageWants(ctx context.Context) readplan.PageWants
	// primePage puts what a page fetch read into the request's loaders.
	primePage(ctx context.Context, page *readplan.Page)
	// users loads users (nil for missing ones) with what sel asks of them.
	users(ctx context.Context, ids []string, sel selection) ([]*social.User, error)
	// comments readies a page of comments and their authors for the
	// fields below (prefetched: a page fetch brought the authors).
	comments(ctx context.Context, cs []*social.Comment, authorSel selection, prefetched bool) error
	// lists loads, level by level, the lists below objects and their
	// users (lists.go).
	lists(ctx context.Context, level []objects)
}

// batched reads ahead (prefetch.go, lists.go).
type batched struct{}

// reading returns the resolver a handler serves with: services with the
// read path's strategies and the fast path's counters (a zeroed set when
// stats is nil).
func (r *Resolver) reading(stats *FastStats) Resolver {
	out := *r
	if out.ahead == nil {
		out.ahead = batched{}
	}
	out.fast = stats
	if out.fast == nil {
		out.fast = NewFastStats()
	}
	return out
}

// aroundRootFields installs the read path's root-field middleware: fresh
// loaders for each mutation field, and the timeline fast path for queries.
func (r *Resolver) aroundRootFields(srv *handler.Server) {
	srv.AroundRootFields(freshLoaders)
	if !r.genericOnly {
		srv.AroundRootFields(r.fastPath)
	}
}

// freshLoaders gives each root field of a mutation loaders of its own.
// Mutation fields run one after the other, and each resolver writes before
// it reads, so a field and everything below it read what the fields before
// it wrote: no resolver has to know which caches its write made stale.
func freshLoaders(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Operation == ast.Mutation {
		ctx = loader.With(ctx, loader.For(ctx).Fresh())
	}
	return next(ctx)
}
