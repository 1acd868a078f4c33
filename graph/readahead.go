package graph

import (
	"context"

	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/social"
)

// readAhead is how resolvers read ahead of the fields below them. The
// gateway serves with batched: a list or page resolver reads its own
// selection, fetches what the fields below will need in one pipeline and
// primes the request's loaders. The benchmark's naive baseline
// (Options.Naive) wires naive, which reads nothing ahead, so each field
// loads for itself. The choice is made once, when the handler is built;
// no resolver checks a mode.
type readAhead interface {
	// pageWants is what the current Timeline field's page brings along.
	pageWants(ctx context.Context) social.PageWants
	// primePage puts what a page fetch read into the request's loaders.
	primePage(ctx context.Context, page *social.Page)
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

// naive reads nothing ahead and primes nothing.
type naive struct{}

func (naive) pageWants(context.Context) social.PageWants { return social.PageWants{} }
func (naive) primePage(context.Context, *social.Page)    {}
func (naive) users(ctx context.Context, ids []string, _ selection) ([]*social.User, error) {
	return loader.For(ctx).Users.LoadAll(ctx, ids)
}
func (naive) comments(context.Context, []*social.Comment, selection, bool) error { return nil }
func (naive) lists(context.Context, []objects)                                   {}
