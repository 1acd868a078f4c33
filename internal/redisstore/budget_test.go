package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// TestUserPageReadBudget: a page of an author whose posts are nearly all
// hidden from the viewer reads no more candidates than its operation's
// read budget allows, ends short with HasNext and an End cursor, and
// paging on from that cursor finds every visible post once, in order.
// Without a budget the same pages are full, as before.
func TestUserPageReadBudget(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	author, viewer, other := u[0], u[1], u[2]
	var visible []string
	for i := range 1500 {
		in := social.NewPost{Content: fmt.Sprint("post ", i), OnlyTo: []string{other}}
		if i%500 == 0 { // three visible posts, far apart
			in.OnlyTo = nil
		}
		p, err := s.CreatePost(ctx, author, in)
		if err != nil {
			t.Fatal(err)
		}
		if in.OnlyTo == nil {
			visible = append(visible, p.ID)
		}
	}
	slices.Reverse(visible) // newest first
	const budget = 300
	var got []string
	after := ""
	pages := 0
	for {
		pages++
		if pages > 100 {
			t.Fatal("too many pages")
		}
		octx := social.WithReadBudget(ctx, budget)
		pg, err := s.UserPage(octx, viewer, author, social.PageRequest{First: 10, After: after}, readplan.PageWants{})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pg.Posts.Items {
			got = append(got, p.ID)
		}
		if left := social.TakeReadBudget(octx, budget); left < 0 {
			t.Fatal("budget overdrawn")
		}
		if !pg.Posts.HasNext {
			break
		}
		after = pg.Posts.EndCursor()
		if after == "" {
			t.Fatalf("page %d: HasNext without a cursor", pages)
		}
	}
	if !slices.Equal(got, visible) {
		t.Fatalf("paged %v, want %v", got, visible)
	}
	// 1500 candidates, at most 17 + 300 a page: at least 5 pages.
	if pages < 5 {
		t.Errorf("%d pages: the budget did not bound them", pages)
	}
	// Without a budget the rounds still end; paging on reaches the same.
	all := allPages(t, 1, func(p social.PageRequest) (social.Connection[string], error) {
		pg, err := s.UserPage(ctx, viewer, author, p, readplan.PageWants{})
		if err != nil {
			return social.Connection[string]{}, err
		}
		return social.PostIDs(pg.Posts), nil
	})
	if !slices.Equal(all, visible) {
		t.Fatalf("without a budget: %v, want %v", all, visible)
	}
}

// TestHomePageReadBudget: the home timeline's rounds after the first spend
// the operation's read budget too, both ways. Pull mode fills the reader's
// list from the author's own timeline, hidden posts included, so nearly
// every candidate is dropped at read time; pages end short with a cursor
// to go on from (End going down, Start going up) and find every visible
// post once, in order.
func TestHomePageReadBudget(t *testing.T) {
	s, _ := feedStore(t, feedConfig("pull"))
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	author, viewer, other := u[0], u[1], u[2]
	feedOK(t, s.Follow(ctx, viewer, author))
	var visible []string
	for i := range 1500 {
		in := social.NewPost{Content: fmt.Sprint("post ", i), OnlyTo: []string{other}}
		if i%500 == 0 {
			in.OnlyTo = nil
		}
		p, err := s.CreatePost(ctx, author, in)
		feedOK(t, err)
		if in.OnlyTo == nil {
			visible = append(visible, p.ID)
		}
	}
	slices.Reverse(visible) // newest first
	const budget = 300
	read := func(p social.PageRequest) social.Connection[*social.Post] {
		t.Helper()
		octx := social.WithReadBudget(ctx, budget)
		pg, err := s.HomePage(octx, viewer, p, readplan.PageWants{})
		feedOK(t, err)
		return pg.Posts
	}
	var down []string
	pages := 0
	for p := (social.PageRequest{First: 10}); ; pages++ {
		if pages > 100 {
			t.Fatal("too many pages")
		}
		c := read(p)
		for _, post := range c.Items {
			down = append(down, post.ID)
		}
		if !c.HasNext {
			break
		}
		p.After = c.EndCursor()
	}
	if !slices.Equal(down, visible) || pages < 3 {
		t.Fatalf("down in %d pages: %v, want %v", pages, down, visible)
	}
	var up []string
	pages = 0
	for p := (social.PageRequest{First: 10, Before: social.EncodeCursor(visible[len(visible)-1])}); ; pages++ {
		if pages > 100 {
			t.Fatal("too many pages")
		}
		c := read(p)
		for _, post := range slices.Backward(c.Items) {
			up = append(up, post.ID)
		}
		if !c.HasPrevious {
			break
		}
		p.Before = c.StartCursor()
	}
	slices.Reverse(up)
	if !slices.Equal(up, visible[:len(visible)-1]) || pages < 3 {
		t.Fatalf("up in %d pages: %v, want %v", pages, up, visible[:len(visible)-1])
	}
}
