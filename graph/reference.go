package graph

import _ "embed"

// ReferenceQuery is the page the read path is measured by: a 20-post home page
// with authors, counters, the viewer's likes, three comments each and
// reposted originals. The read path is held to its round-trip budget
// (graph/readpath_test.go), and the benchmarks (graph/exec_bench_test.go,
// cmd/bench) measure it.
//
//go:embed reference.graphql
var ReferenceQuery string
