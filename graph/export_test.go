package graph

import "github.com/socialgw/gateway/graph/readpath"

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
// reads ahead (readpath.Naive): served with loaders whose batches hold
// one key, the read path's oracle.
func Naive(r *Resolver) *Resolver {
	out := GenericOnly(r)
	out.read = readpath.Naive()
	return out
}
