// Package readpath is the gateway's read path: what resolvers read ahead
// of the fields below them, and the timeline fast path. It plans a
// timeline page's fetch from the query's selection (prefetch.go), primes
// the request's loaders with what the fetch read, reads the lists below
// objects level by level (lists.go), and renders timeline root fields
// straight from the fetched page (fastpath.go, fastrender.go). What it
// knows of each field of the schema is the field's rule (fields.go); every
// read of the document goes through selection.go.
package readpath
