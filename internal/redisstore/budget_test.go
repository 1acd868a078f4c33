package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// TestUserPageReadBudget: a page of an author whose posts are nearly all
// hidden from the viewer by NOT_TO, written before NotToListed existed (so
// the reader's index cannot leave them out: unlisted), reads no more candidates than its operation's read
// budget allows, ends short with HasNext and an End cursor when a public
// post lies below where it stopped, and paging on from that cursor finds
// every visible post once, in order.
// Without a budget the same pages are full, as before.
func TestUserPageReadBudget(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	author, viewer := u[0], u[1]
	var visible []string
	for i := range 1500 {
		in := social.NewPost{Content: fmt.Sprint("post ", i), NotTo: []string{viewer}}
		if i%500 == 0 { // three visible posts, far apart
			in.NotTo = nil
		}
		p, err := s.CreatePost(ctx, author, in)
		if err != nil {
			t.Fatal(err)
		}
		if in.NotTo == nil {
			visible = append(visible, p.ID)
		}
	}
	unlisted(t, s, author, viewer)
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
// the operation's read budget too, both ways. Pull mode reads the
// author's posts as the reader may see them by the reader's index, NOT_TO
// posts listing the reader included (unlisted), so nearly every candidate is dropped
// at read time; pages end short with a cursor to go on from (End going
// down, Start going up) and find every visible post once, in order.
func TestHomePageReadBudget(t *testing.T) {
	s, _ := feedStore(t, feedConfig("pull"))
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	author, viewer := u[0], u[1]
	feedOK(t, s.Follow(ctx, viewer, author))
	var visible []string
	for i := range 1500 {
		in := social.NewPost{Content: fmt.Sprint("post ", i), NotTo: []string{viewer}}
		if i%500 == 0 {
			in.NotTo = nil
		}
		p, err := s.CreatePost(ctx, author, in)
		feedOK(t, err)
		if in.NotTo == nil {
			visible = append(visible, p.ID)
		}
	}
	unlisted(t, s, author, viewer)
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

// TestUserPageScreensHidden: a signed-in viewer's page reads no post
// addressed only to others nor any NOT_TO post listing the viewer (the
// reader's index leaves them out), screens the other NOT_TO ones and reads the full hash only of what the screen lets
// through; the page holds exactly what the viewer may see (ONLY_TO them,
// NOT_TO others, public), in order; and another page of the same
// operation screens none of them again.
func TestUserPageScreensHidden(t *testing.T) {
	rdb := redistest.Client(t)
	reads := &cmdCounter{}
	rdb.AddHook(reads) // a cluster client's hook sees every command too
	s := redisstore.New(rdb, redistest.Prefix(t))
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	author, viewer, other := u[0], u[1], u[2]
	var visible []string
	for i := range 400 {
		in := social.NewPost{Content: fmt.Sprint("post ", i), OnlyTo: []string{other}}
		switch i % 100 {
		case 10:
			in.OnlyTo = []string{viewer, other}
		case 20:
			in.OnlyTo, in.NotTo = nil, []string{viewer}
		case 30:
			in.OnlyTo, in.NotTo = nil, []string{other}
		case 40:
			in.OnlyTo = nil
		}
		p, err := s.CreatePost(ctx, author, in)
		feedOK(t, err)
		if i%100 == 10 || i%100 == 30 || i%100 == 40 {
			visible = append(visible, p.ID)
		}
	}
	slices.Reverse(visible)
	reads.take()
	pg, err := s.UserPage(ctx, viewer, author, social.PageRequest{First: 20}, readplan.PageWants{})
	feedOK(t, err)
	if got := social.PostIDs(pg.Posts).Items; !slices.Equal(got, visible) {
		t.Fatalf("page %v, want %v", got, visible)
	}
	// The NOT_TO candidates that do not list the viewer (4) are screened
	// first: only what the viewer may see is read in full, and none of
	// the 300 posts only for others, nor of the 4 NOT_TO the viewer, is
	// read at all.
	if n := reads.take(); n.full > len(visible) || n.screens != 4 {
		t.Errorf("%d full reads and %d screens of post hashes for 400 candidates, %d visible", n.full, n.screens, len(visible))
	}

	// Within one operation, another page of the same author (an alias)
	// skips what the first found hidden: it screens nothing again.
	octx := social.WithReadBudget(ctx, 10_000)
	for i, first := range []int{20, 19} {
		reads.take()
		pg, err := s.UserPage(octx, viewer, author, social.PageRequest{First: first}, readplan.PageWants{})
		feedOK(t, err)
		if got := social.PostIDs(pg.Posts).Items; !slices.Equal(got, visible[:min(first, len(visible))]) {
			t.Fatalf("page %d: %v, want %v", i, got, visible)
		}
		if n := reads.take(); i == 1 && n.screens != 0 {
			t.Errorf("the second page of the operation screened %d posts again", n.screens)
		}
	}
}

// TestHomePageSkipsKnownHidden: in pull mode a home page reads the
// author's posts as the reader may see them; a second page of the same
// operation (an alias) reads none of the posts the first found hidden.
func TestHomePageSkipsKnownHidden(t *testing.T) {
	rdb := redistest.Client(t)
	reads := &cmdCounter{}
	rdb.AddHook(reads)
	s := redisstore.New(rdb, redistest.Prefix(t))
	feedOK(t, s.SetFeed(feedConfig("pull")))
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	author, viewer, other := u[0], u[1], u[2]
	feedOK(t, s.Follow(ctx, viewer, author))
	var visible []string
	for i := range 200 {
		in := social.NewPost{Content: fmt.Sprint("post ", i), OnlyTo: []string{other}}
		if i%50 == 0 {
			in.OnlyTo = nil
		}
		p, err := s.CreatePost(ctx, author, in)
		feedOK(t, err)
		if in.OnlyTo == nil {
			visible = append(visible, p.ID)
		}
	}
	slices.Reverse(visible)
	octx := social.WithReadBudget(ctx, 10_000)
	for i, first := range []int{10, 9} {
		reads.take()
		pg, err := s.HomePage(octx, viewer, social.PageRequest{First: first}, readplan.PageWants{})
		feedOK(t, err)
		if got := social.PostIDs(pg.Posts).Items; !slices.Equal(got, visible) {
			t.Fatalf("page %d: %v, want %v", i, got, visible)
		}
		if n := reads.take(); i == 1 && n.full > len(visible) {
			t.Errorf("the second page of the operation read %d posts in full, %d visible", n.full, len(visible))
		}
	}
}

// unlisted makes author's NOT_TO posts listing reader look as they did
// when written before NotToListed existed, until MigratePostIndexes runs:
// in NotToPosts only, so that reader's scans meet them and screen them.
func unlisted(t *testing.T, s *redisstore.Store, author, reader string) {
	t.Helper()
	feedOK(t, s.Client().Del(context.Background(), s.Keys().NotToListed(author, reader)).Err())
}
