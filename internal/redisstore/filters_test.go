package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

func TestFilterAddRemove(t *testing.T) {
	s, rdb := feedStore(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return now })
	u := feedUsers(t, s, 2)
	owner, other := u[0], u[1]
	secs := func(n int) *int { return &n }
	var kept, theirs string // a filter of owner's, one of other's

	theirF, err := s.AddFilter(ctx, other, social.FilterInput{Phrase: "theirs", Context: social.FilterHome})
	feedOK(t, err)
	theirs = theirF.ID
	tests := []struct {
		name   string
		step   func() error
		code   social.Code
		phrase []string // owner's filters after the step
	}{
		{"add", func() error {
			f, err := s.AddFilter(ctx, owner, social.FilterInput{Phrase: " Cats ", WholeWord: true, Context: social.FilterHome | social.FilterComments})
			if err == nil {
				kept = f.ID
			}
			return err
		}, "", []string{"Cats"}},
		{"add expiring", func() error {
			_, err := s.AddFilter(ctx, owner, social.FilterInput{Phrase: "soon", Context: social.FilterPublic, ExpiresIn: secs(60)})
			return err
		}, "", []string{"Cats", "soon"}},
		{"empty phrase", func() error {
			_, err := s.AddFilter(ctx, owner, social.FilterInput{Phrase: "  ", Context: social.FilterHome})
			return err
		}, social.BadUserInput, []string{"Cats", "soon"}},
		{"overlong phrase", func() error {
			_, err := s.AddFilter(ctx, owner, social.FilterInput{Phrase: strings.Repeat("x", social.MaxFilterPhrase+1), Context: social.FilterHome})
			return err
		}, social.BadUserInput, []string{"Cats", "soon"}},
		{"no context", func() error {
			_, err := s.AddFilter(ctx, owner, social.FilterInput{Phrase: "dogs"})
			return err
		}, social.BadUserInput, []string{"Cats", "soon"}},
		{"expiry in the past", func() error {
			_, err := s.AddFilter(ctx, owner, social.FilterInput{Phrase: "dogs", Context: social.FilterHome, ExpiresIn: secs(-1)})
			return err
		}, social.BadUserInput, []string{"Cats", "soon"}},
		{"remove another user's filter", func() error { return s.RemoveFilter(ctx, owner, theirs) }, social.NotFound, []string{"Cats", "soon"}},
		{"remove an unknown filter", func() error { return s.RemoveFilter(ctx, owner, "999999") }, social.NotFound, []string{"Cats", "soon"}},
		{"remove a malformed id", func() error { return s.RemoveFilter(ctx, owner, "x") }, social.NotFound, []string{"Cats", "soon"}},
		{"expired: gone at once", func() error { now = now.Add(time.Minute); return nil }, "", []string{"Cats"}},
		{"remove", func() error { return s.RemoveFilter(ctx, owner, kept) }, "", nil},
		{"remove again", func() error { return s.RemoveFilter(ctx, owner, kept) }, social.NotFound, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantCode(t, tt.name, tt.step(), tt.code)
			fs, err := s.Filters(ctx, owner)
			feedOK(t, err)
			var got []string
			for _, f := range fs {
				got = append(got, f.Phrase)
			}
			if !slices.Equal(got, tt.phrase) {
				t.Fatalf("filters %q, want %q", got, tt.phrase)
			}
		})
	}
	if fs, _ := s.Filters(ctx, other); len(fs) != 1 || fs[0].ID != theirs {
		t.Fatalf("the other user's filters: %+v", fs)
	}

	t.Run("the cap", func(t *testing.T) {
		// One expired filter is cleaned up by the next write and does not
		// count.
		_, err := s.AddFilter(ctx, owner, social.FilterInput{Phrase: "brief", Context: social.FilterHome, ExpiresIn: secs(1)})
		feedOK(t, err)
		now = now.Add(2 * time.Second)
		for i := range social.MaxFilters {
			_, err := s.AddFilter(ctx, owner, social.FilterInput{Phrase: fmt.Sprint("word", i), Context: social.FilterHome})
			feedOK(t, err)
		}
		seq, _ := rdb.Get(ctx, s.Keys().FilterSeq()).Result()
		_, err = s.AddFilter(ctx, owner, social.FilterInput{Phrase: "one too many", Context: social.FilterHome})
		wantCode(t, "the 101st filter", err, social.BadUserInput)
		if n, _ := rdb.HLen(ctx, s.Keys().Filters(owner)).Result(); n != social.MaxFilters {
			t.Fatalf("%d filters stored, want %d (the expired one cleaned up, the refused one not written)", n, social.MaxFilters)
		}
		if after, _ := rdb.Get(ctx, s.Keys().FilterSeq()).Result(); after != seq {
			t.Fatalf("the refused filter took an id: %s → %s", seq, after)
		}
	})
}

// strictPages reads every page, first a page, and requires each page but
// the last to be full, no post twice, and the cursor to go on.
func strictPages(tb testing.TB, first int, page func(social.PageRequest) (social.Connection[*social.Post], error)) []string {
	tb.Helper()
	var got []string
	seen := map[string]bool{}
	after := ""
	for n := 0; n < 100; n++ {
		c, err := page(social.PageRequest{First: first, After: after})
		feedOK(tb, err)
		ids := social.PostIDs(c).Items
		for _, id := range ids {
			if seen[id] {
				tb.Fatalf("page %d repeats %s", n, id)
			}
			seen[id] = true
		}
		got = append(got, ids...)
		if !c.HasNext {
			return got
		}
		if len(ids) != first {
			tb.Fatalf("page %d has %d posts, want %d", n, len(ids), first)
		}
		after = c.EndCursor()
	}
	tb.Fatal("too many pages")
	return nil
}

// TestFilteredPages: in each context, the posts a filter hides leave the
// page before it is cut: pages stay full, cursors go on with no post
// skipped or repeated, and the other contexts are not touched. With the
// post cache, a home page reads the text of the originals of the reposts
// it knows in its check's pipeline; without, with one more.
func TestFilteredPages(t *testing.T) {
	for _, cached := range []bool{false, true} {
		t.Run(fmt.Sprint("post cache ", cached), func(t *testing.T) { testFilteredPages(t, cached) })
	}
}

func testFilteredPages(t *testing.T, cached bool) {
	s, rdb := feedStore(t, feedConfig(redisstore.Push))
	if cached {
		s.CachePosts(1000)
	}
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	reader, author, reposter := u[0], u[1], u[2]
	feedOK(t, s.Follow(ctx, reader, author))
	feedOK(t, s.Follow(ctx, reader, reposter))
	l, err := s.CreateList(ctx, reader, "l")
	feedOK(t, err)
	_, err = s.AddToList(ctx, reader, l.ID, []string{author, reposter})
	feedOK(t, err)
	drain(t, w)

	var visible, all []string // newest first
	var origHidden *social.Post
	for i := range 24 {
		in := social.NewPost{Content: fmt.Sprintf("post %d #pets", i)}
		hidden := i%3 != 0
		switch i % 3 {
		case 1:
			in.Content = fmt.Sprintf("my CAT, %d #pets", i)
		case 2:
			spoiler := "about cats and a cat"
			in.SpoilerText = spoiler
		}
		p := feedPost(t, s, author, in)
		if hidden && origHidden == nil {
			origHidden = p
		}
		all = append([]string{p.ID}, all...)
		if !hidden {
			visible = append([]string{p.ID}, visible...)
		}
	}
	// A plain repost of a hidden post is hidden by its original's text;
	// the reader's own post is never hidden.
	rp := feedPost(t, s, reposter, social.NewPost{RepostOf: origHidden.ID})
	own := feedPost(t, s, reader, social.NewPost{Content: "my cat #pets"})
	drain(t, w)

	_, err = s.AddFilter(ctx, reader, social.FilterInput{Phrase: "Cat", WholeWord: true, Context: social.FilterHome | social.FilterLists | social.FilterPublic})
	feedOK(t, err)

	pages := map[string]func(context.Context, social.PageRequest) (social.Connection[*social.Post], error){
		"home": func(ctx context.Context, p social.PageRequest) (social.Connection[*social.Post], error) {
			pg, err := s.HomePage(ctx, reader, p, readplan.PageWants{})
			return pageOf(pg, err)
		},
		"list": func(ctx context.Context, p social.PageRequest) (social.Connection[*social.Post], error) {
			pg, err := s.ListPage(ctx, reader, l.ID, p, readplan.PageWants{})
			return pageOf(pg, err)
		},
		"user": func(ctx context.Context, p social.PageRequest) (social.Connection[*social.Post], error) {
			pg, err := s.UserPage(ctx, reader, author, p, readplan.PageWants{})
			return pageOf(pg, err)
		},
		"tag": func(ctx context.Context, p social.PageRequest) (social.Connection[*social.Post], error) {
			pg, err := s.TagPage(ctx, reader, "pets", p, readplan.PageWants{})
			return pageOf(pg, err)
		},
	}
	want := map[string][]string{
		"home": append([]string{own.ID}, visible...),
		"list": visible,
		"user": visible,
		"tag":  append([]string{own.ID}, visible...),
	}
	for _, first := range []int{1, 4, 7} {
		for name, page := range pages {
			t.Run(fmt.Sprint(name, "/first=", first), func(t *testing.T) {
				// With an operation's read state (the matcher kept) and
				// without (read on every page).
				for _, c := range []context.Context{ctx, social.WithReadBudget(ctx, social.DefaultReadBudget)} {
					got := strictPages(t, first, func(p social.PageRequest) (social.Connection[*social.Post], error) {
						return page(c, p)
					})
					if !slices.Equal(got, want[name]) {
						t.Fatalf("got %v\nwant %v", got, want[name])
					}
				}
			})
		}
	}
	if slices.Contains(want["home"], rp.ID) {
		t.Fatal("the repost of a hidden post is expected")
	}

	// Another context's filter leaves these pages alone.
	feedOK(t, s.RemoveFilter(ctx, reader, mustOnlyFilter(t, s, reader)))
	_, err = s.AddFilter(ctx, reader, social.FilterInput{Phrase: "cat", Context: social.FilterNotifications | social.FilterComments})
	feedOK(t, err)
	got := strictPages(t, 5, func(p social.PageRequest) (social.Connection[*social.Post], error) { return pages["user"](ctx, p) })
	if !slices.Equal(got, all) {
		t.Fatalf("user page under other contexts' filter: got %v, want %v", got, all)
	}
}

func pageOf(pg *readplan.Page, err error) (social.Connection[*social.Post], error) {
	if err != nil {
		return social.Connection[*social.Post]{}, err
	}
	return pg.Posts, nil
}

func mustOnlyFilter(tb testing.TB, s *redisstore.Store, u string) string {
	tb.Helper()
	fs, err := s.Filters(context.Background(), u)
	feedOK(tb, err)
	if len(fs) != 1 {
		tb.Fatalf("filters %+v, want one", fs)
	}
	return fs[0].ID
}

// TestFilteredNotifications: notifications about the posts a filter hides
// in NOTIFICATIONS leave the page before it is cut; pages stay full and
// cursors go on.
func TestFilteredNotifications(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	reader, author := u[0], u[1]
	readerName := "u0_" + strings.ReplaceAll(t.Name(), "/", "_")
	var want []string // post ids of the notifications kept, newest first
	for i := range 15 {
		content := fmt.Sprintf("hi @%s %d", readerName, i)
		if i%3 != 0 {
			content = fmt.Sprintf("hi @%s, a Cat %d", readerName, i)
		}
		p := feedPost(t, s, author, social.NewPost{Content: content})
		if i%3 == 0 {
			want = append([]string{p.ID}, want...)
		}
		drain(t, w)
	}
	_, err := s.AddFilter(ctx, reader, social.FilterInput{Phrase: "cat", WholeWord: true, Context: social.FilterNotifications})
	feedOK(t, err)
	for _, first := range []int{1, 2, 4} {
		var got []string
		after := ""
		for n := 0; ; n++ {
			page, err := s.Notifications(ctx, reader, social.PageRequest{First: first, After: after}, 1)
			feedOK(t, err)
			for _, note := range page.Items {
				got = append(got, note.PostID)
			}
			if !page.HasNext {
				break
			}
			if len(page.Items) != first || n > 50 {
				t.Fatalf("first=%d: page %d has %d notifications", first, n, len(page.Items))
			}
			after = page.EndCursor()
		}
		if !slices.Equal(got, want) {
			t.Fatalf("first=%d: got %v, want %v", first, got, want)
		}
	}
	// The same filter in another context hides no notification.
	feedOK(t, s.RemoveFilter(ctx, reader, mustOnlyFilter(t, s, reader)))
	_, err = s.AddFilter(ctx, reader, social.FilterInput{Phrase: "cat", Context: social.FilterHome})
	feedOK(t, err)
	page, err := s.Notifications(ctx, reader, social.PageRequest{First: 100}, 1)
	feedOK(t, err)
	if len(page.Items) != 15 {
		t.Fatalf("%d notifications under a HOME filter, want 15", len(page.Items))
	}
}

// TestFilteredComments: a post's comments that a filter hides in
// COMMENTS leave its pages (full, cursors going on) and the first
// comments a timeline page brings along; the viewer's own stay.
func TestFilteredComments(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	reader, author, commenter := u[0], u[1], u[2]
	feedOK(t, s.Follow(ctx, reader, author))
	post := feedPost(t, s, author, social.NewPost{Content: "a post"})
	drain(t, w)
	hidden := map[string]bool{}
	for i := range 14 {
		content, by := fmt.Sprint("comment ", i), commenter
		switch i % 4 {
		case 1, 2:
			content = fmt.Sprintf("a CAT %d", i)
		case 3:
			content, by = fmt.Sprintf("my cat %d", i), reader // own: kept
		}
		c, err := s.AddComment(ctx, by, post.ID, content)
		feedOK(t, err)
		hidden[c.ID] = i%4 == 1 || i%4 == 2
	}
	all := func(first int) []string {
		var got []string
		after := ""
		for n := 0; ; n++ {
			k := readplan.ListKey{List: readplan.ListComments, Parent: post.ID, Page: social.PageRequest{First: first, After: after}}
			pages, errs := s.ListPages(ctx, reader, []readplan.ListKey{k})
			feedOK(t, errs[0])
			c := pages[0].Comments
			for _, cm := range c.Items {
				got = append(got, cm.ID)
			}
			if !c.HasNext {
				return got
			}
			if len(c.Items) != first || n > 50 {
				t.Fatalf("first=%d: page %d has %d comments", first, n, len(c.Items))
			}
			after = c.EndCursor()
		}
	}
	unfiltered := all(100)
	var want []string
	for _, id := range unfiltered {
		if !hidden[id] {
			want = append(want, id)
		}
	}
	_, err := s.AddFilter(ctx, reader, social.FilterInput{Phrase: "cat", WholeWord: true, Context: social.FilterComments})
	feedOK(t, err)
	for _, first := range []int{1, 2, 3, 100} {
		if got := all(first); !slices.Equal(got, want) {
			t.Fatalf("first=%d: got %v, want %v", first, got, want)
		}
	}
	// The first comments a page brings along: none hidden, or none
	// brought (Post.comments then reads its page as above).
	for _, n := range []int{2, 3, 6} {
		pg, err := s.HomePage(social.WithReadBudget(ctx, social.DefaultReadBudget), reader, social.PageRequest{First: 5}, readplan.PageWants{Comments: n})
		feedOK(t, err)
		c, ok := pg.Comments[post.ID]
		if !ok {
			continue
		}
		for _, cm := range c.Items {
			if hidden[cm.ID] {
				t.Fatalf("comments=%d: the page brought hidden comment %s", n, cm.ID)
			}
		}
		if len(c.Items) < n && c.HasNext {
			t.Fatalf("comments=%d: %d brought with more to come", n, len(c.Items))
		}
	}
}

// TestFilteredLivePosts: the live timeline's delivery check leaves out
// what the viewer's HOME filters hide, as the home page does.
func TestFilteredLivePosts(t *testing.T) {
	s, rdb := feedStore(t, feedConfig(redisstore.Push))
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	reader, author := u[0], u[1]
	feedOK(t, s.Follow(ctx, reader, author))
	kept := feedPost(t, s, author, social.NewPost{Content: "a dog"})
	hidden := feedPost(t, s, author, social.NewPost{Content: "a Cat"})
	repost := feedPost(t, s, author, social.NewPost{RepostOf: hidden.ID})
	drain(t, w)
	messages := []string{kept.ID + ":" + author, hidden.ID + ":" + author, repost.ID + ":" + author}
	check := func(want ...bool) {
		t.Helper()
		posts, err := s.LivePosts(ctx, reader, messages)
		feedOK(t, err)
		for i, p := range posts {
			if (p != nil) != want[i] {
				t.Fatalf("post %d sent: %v, want %v", i, p != nil, want[i])
			}
		}
	}
	check(true, true, true)
	_, err := s.AddFilter(ctx, reader, social.FilterInput{Phrase: "cat", WholeWord: true, Context: social.FilterHome})
	feedOK(t, err)
	check(true, false, false)
	feedOK(t, s.RemoveFilter(ctx, reader, mustOnlyFilter(t, s, reader)))
	_, err = s.AddFilter(ctx, reader, social.FilterInput{Phrase: "cat", WholeWord: true, Context: social.FilterPublic})
	feedOK(t, err)
	check(true, true, true)
}
