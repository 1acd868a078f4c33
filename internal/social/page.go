package social

// Page bounds of every connection in the API.
const (
	DefaultFirst = 20
	MaxFirst     = 100
)

// PageRequest asks for First items after the opaque cursor After, or, for
// the lists that page both ways, the First items before (newer than) the
// cursor Before, those nearest to it.
type PageRequest struct {
	First  int
	After  string
	Before string
}

// NewPageRequest validates GraphQL paging arguments.
func NewPageRequest(first *int, after *string) (PageRequest, error) {
	p := PageRequest{First: DefaultFirst}
	if first != nil {
		p.First = *first
	}
	if err := ValidateFirst(p.First); err != nil {
		return PageRequest{}, err
	}
	if after != nil {
		p.After = *after
	}
	return p, nil
}

// NewTwoWayRequest validates the paging arguments of a list that pages
// both ways: after or before, not both.
func NewTwoWayRequest(first *int, after, before *string) (PageRequest, error) {
	p, err := NewPageRequest(first, after)
	if err != nil || before == nil || *before == "" {
		return p, err
	}
	if p.After != "" {
		return PageRequest{}, Errorf(BadUserInput, "after and before cannot be used together")
	}
	p.Before = *before
	return p, nil
}

// Connection is one page of a list, newest first.
type Connection[T any] struct {
	Items   []T
	Cursors []string
	HasNext bool
	// HasPrevious: items before (newer than) the page exist; only set by
	// a page read with PageRequest.Before.
	HasPrevious bool
	Total       int
	// End, when set, is where the next page starts, past the last item: a
	// page whose read budget ran out while the candidates it read were
	// hidden from the viewer (ReadBudget) ends there, short or empty.
	End string
	// Start, when set, is where the previous (newer) page starts, before
	// the first item: a newer page (PageRequest.Before) whose read budget
	// ran out ends there.
	Start string
}

// StartCursor is the cursor of the page's first item ("" for an empty
// page).
func (c Connection[T]) StartCursor() string {
	if c.Start != "" {
		return c.Start
	}
	if len(c.Cursors) > 0 {
		return c.Cursors[0]
	}
	return ""
}

// EndCursor is the cursor the next page starts after ("" for an empty
// page that cannot go on).
func (c Connection[T]) EndCursor() string {
	if c.End != "" {
		return c.End
	}
	if n := len(c.Cursors); n > 0 {
		return c.Cursors[n-1]
	}
	return ""
}

// PostIDs returns the page of the ids of a page of posts.
func PostIDs(c Connection[*Post]) Connection[string] {
	out := Connection[string]{Cursors: c.Cursors, HasNext: c.HasNext, HasPrevious: c.HasPrevious, Total: c.Total, End: c.End, Start: c.Start}
	out.Items = make([]string, len(c.Items))
	for i, p := range c.Items {
		out.Items[i] = p.ID
	}
	return out
}
