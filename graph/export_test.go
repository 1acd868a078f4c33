package graph

// FastServed reports how many root fields the timeline fast path rendered.
func FastServed() int64 { return fastServed.Load() }
