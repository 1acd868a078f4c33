package readpath

import (
	"context"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// readAhead is how resolvers read ahead of the fields below them. The
// gateway serves with batched: a list or page resolver reads its own
// selection, fetches what the fields below will need in one pipeline and
// primes the request's loaders. The tests also serve a variant that reads
// nothing ahead, to compare against (Naive); the choice is made once, when
// the handler is built, and no resolver checks a mode.
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

// Reader is the read path the resolvers call: a page's look-ahead and
// priming, and the lists below objects read ahead level by level.
type Reader struct{ ahead readAhead }

// New returns the read path the gateway serves with: batched.
func New() *Reader { return &Reader{ahead: batched{}} }

// Naive returns a read path that reads nothing ahead: no page brings
// anything along, nothing is primed, every field loads for itself, as
// resolvers written one field at a time would. Served with loaders whose
// batches hold one key and without the fast path, it is the tests'
// oracle: whatever the look-ahead, the read-ahead and the fast path do,
// the data must equal this variant's.
func Naive() *Reader { return &Reader{ahead: naive{}} }

// naive reads nothing ahead and primes nothing.
type naive struct{}

func (naive) pageWants(context.Context) readplan.PageWants { return readplan.PageWants{} }
func (naive) primePage(context.Context, *readplan.Page)    {}
func (naive) users(ctx context.Context, ids []string, _ selection) ([]*social.User, error) {
	return loader.For(ctx).Users.LoadAll(ctx, ids)
}
func (naive) comments(context.Context, []*social.Comment, selection, bool) error { return nil }
func (naive) lists(context.Context, []objects)                                   {}

// PageWants is what the current Timeline field's page brings along.
func (r *Reader) PageWants(ctx context.Context) readplan.PageWants { return r.ahead.pageWants(ctx) }

// FreshLoaders gives each root field of a mutation loaders of its own.
// Mutation fields run one after the other, and each resolver writes before
// it reads, so a field and everything below it read what the fields before
// it wrote: no resolver has to know which caches its write made stale.
func FreshLoaders(ctx context.Context, next graphql.RootResolver) graphql.Marshaler {
	if op := graphql.GetOperationContext(ctx).Operation; op != nil && op.Operation == ast.Mutation {
		ctx = loader.With(ctx, loader.For(ctx).Fresh())
	}
	return next(ctx)
}
