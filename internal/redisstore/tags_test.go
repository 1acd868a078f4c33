package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// tagPostIDs reads a page of a tag as post ids.
func tagPostIDs(ctx context.Context, s *redisstore.Store, viewer, tag string, p social.PageRequest) (social.Connection[string], error) {
	page, err := s.TagPage(ctx, viewer, tag, p, readplan.PageWants{})
	if err != nil {
		return social.Connection[string]{}, err
	}
	return social.PostIDs(page.Posts), nil
}

// TestTagPage: a tag's page holds the posts its viewer may see, whatever
// their audience, without the authors on the other side of a block or
// muted, newest first, paged one by one as in one page; deletions and
// edits move posts out of and into it.
func TestTagPage(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 6)
	me, a, b, c, muted, blocker := u[0], u[1], u[2], u[3], u[4], u[5]
	feedOK(t, s.Mute(ctx, me, muted))
	feedOK(t, s.Block(ctx, blocker, me))
	post := func(author, text string, in social.NewPost) string {
		in.Content = text
		return feedPost(t, s, author, in).ID
	}
	p1 := post(a, "#Go one", social.NewPost{})
	p2 := post(b, "for me #go", social.NewPost{OnlyTo: []string{me}})
	p3 := post(b, "for c #go", social.NewPost{OnlyTo: []string{c}})
	p4 := post(c, "not me #GO", social.NewPost{NotTo: []string{me}})
	p5 := post(muted, "#go muted", social.NewPost{})
	p6 := post(blocker, "#go blocker", social.NewPost{})
	post(a, "#other", social.NewPost{})
	p8 := post(me, "mine #go", social.NewPost{OnlyTo: []string{a}})
	drain(t, w)

	views := []struct {
		name, viewer string
		want         []string
	}{
		{"me", me, []string{p8, p2, p1}},
		{"anonymous", "", []string{p6, p5, p1}},
		{"c", c, []string{p6, p5, p4, p3, p1}},
		{"a", a, []string{p8, p6, p5, p4, p1}},
	}
	check := func(step string, tag string) {
		t.Helper()
		for _, v := range views {
			for _, first := range []int{1, 2, 20} {
				got := allPages(t, first, func(p social.PageRequest) (social.Connection[string], error) {
					return tagPostIDs(ctx, s, v.viewer, tag, p)
				})
				if !slices.Equal(got, v.want) {
					t.Fatalf("%s: %s's pages of %d of #%s = %v, want %v", step, v.name, first, tag, got, v.want)
				}
			}
		}
	}
	check("all", "gO")
	// The ONLY_TO posts are only in their readers' own indexes.
	k := s.Keys()
	if n := rdb.ZCard(ctx, k.TagPosts("go")).Val(); n != 4 {
		t.Errorf("the shared index holds %d posts, want 4 (PUBLIC and NOT_TO)", n)
	}
	for _, tt := range []struct {
		user string
		want int64
	}{{me, 2}, {a, 1}, {b, 2}, {c, 1}, {muted, 0}} {
		if n := rdb.ZCard(ctx, k.TagOnlyTo(tt.user, "go")).Val(); n != tt.want {
			t.Errorf("user %s's own index holds %d posts, want %d", tt.user, n, tt.want)
		}
	}

	feedOK(t, s.DeletePost(ctx, a, p1))
	feedOK(t, s.DeletePost(ctx, b, p2))
	drain(t, w)
	views[0].want = []string{p8}
	views[1].want = []string{p6, p5}
	views[2].want = []string{p6, p5, p4, p3}
	views[3].want = []string{p8, p6, p5, p4}
	check("after deletions", "go")
	if n := rdb.ZCard(ctx, k.TagPosts("go")).Val(); n != 3 {
		t.Errorf("after deletions the shared index holds %d posts, want 3", n)
	}
	if n := rdb.ZCard(ctx, k.TagOnlyTo(me, "go")).Val(); n != 1 {
		t.Errorf("after deletions my index holds %d posts, want 1", n)
	}

	// An edit moves the post between its tags (the store's part of
	// editPost: ReindexPost with the content before).
	edited := &social.Post{ID: p8, AuthorID: me, Content: "mine #rust", Visibility: social.OnlyTo}
	feedOK(t, s.ReindexPost(ctx, edited, "mine #go"))
	views = views[:1]
	views[0].want = nil
	check("edited away", "go")
	views[0].want = []string{p8}
	check("edited in", "rust")

	// The cleanup of a user's own indexes.
	feedOK(t, s.DropUserTags(ctx, me))
	if n := rdb.Exists(ctx, k.TagOnlyTo(me, "rust"), k.TagOnlyToIndex(me)).Val(); n != 0 {
		t.Errorf("%d of my tag keys left after DropUserTags", n)
	}
}

func TestTagPageBadInput(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	for _, tag := range []string{"", "#", "no spaces", "123", string(make([]byte, 101))} {
		_, err := s.TagPage(ctx, "", tag, social.PageRequest{First: 20}, readplan.PageWants{})
		if social.ErrorCode(err) != social.BadUserInput {
			t.Errorf("TagPage(%q) = %v, want BAD_USER_INPUT", tag, err)
		}
	}
}

// TestTagPageRoundTrips: a tag page costs the same round trips at 1, 20
// and 100 posts, whoever reads it.
func TestTagPageRoundTrips(t *testing.T) {
	s, w, cnt, u := tripStore(t, 3)
	ctx := context.Background()
	for i := range 120 {
		in := social.NewPost{Content: fmt.Sprintf("post %d #bench", i)}
		if i%10 == 0 {
			in.OnlyTo = []string{u[1]}
		}
		feedPost(t, s, u[i%3], in)
	}
	drain(t, w)
	w8 := readplan.PageWants{Authors: true, Counts: true, Marks: true}
	for _, viewer := range []string{"", u[1]} {
		var trips []int64
		for _, first := range []int{1, 20, 100} {
			_, _ = s.TagPage(ctx, viewer, "bench", social.PageRequest{First: first}, w8) // warm the scripts
			trips = append(trips, cnt.trips(t, func() error {
				_, err := s.TagPage(ctx, viewer, "bench", social.PageRequest{First: first}, w8)
				return err
			}))
		}
		if trips[0] != trips[1] || trips[1] != trips[2] {
			t.Errorf("viewer %q: round trips at 1, 20, 100 posts = %v, want equal", viewer, trips)
		}
		t.Logf("viewer %q: %d round trips a page", viewer, trips[1])
	}
}
