package graph

import (
	"context"

	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Variants of the read path that the tests compare the gateway's with.
// They exist only in this package's test binary.

// GenericOnly returns services whose handler never takes the timeline fast
// path: every field goes through gqlgen's generated execution.
func GenericOnly(r *Resolver) *Resolver {
	out := *r
	out.genericOnly = true
	return &out
}

// Naive returns services whose handler neither takes the fast path nor
// reads ahead: no page brings anything along, nothing is primed, every
// field loads for itself, as resolvers written one field at a time would.
// Served with loaders whose batches hold one key, it is the read path's
// oracle: whatever the look-ahead, the read-ahead and the fast path do,
// the data must equal this variant's.
func Naive(r *Resolver) *Resolver {
	out := GenericOnly(r)
	out.ahead = naive{}
	return out
}

// naive reads nothing ahead and primes nothing.
type naive struct{}

func (naive) pageWants(context.Context) readplan.PageWants { return readplan.PageWants{} }
func (naive) primePage(context.Context, *readplan.Page)    {}
func (naive) users(ctx context.Context, ids []string, _ selection) ([]*social.User, error) {
	return loader.For(ctx).Users.LoadAll(ctx, ids)
}
func (naive) comments(context.Context, []*social.Comment, selection, bool) error { return nil }
func (naive) lists(context.Context, []objects)                                   {}
