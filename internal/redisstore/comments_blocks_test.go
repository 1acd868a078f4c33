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

// TestCommentsAcrossBlocks: comments and answers of users on either side
// of a block with the viewer are left out of the viewer's pages, as their
// posts are: the post's comments page by page (the list loader's read,
// sizes 1 to 3), a comment's answers, and the first comments a home page
// brings along (from the post hash's packed comments and from the
// comment rows). Walking the pages finds every other comment once, in
// order; an anonymous reader and the users outside the blocks see all.
func TestCommentsAcrossBlocks(t *testing.T) {
	s, rdb := feedStore(t, feedConfig(redisstore.Push))
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 6)
	author, viewer, blocked, blocker, x, y := u[0], u[1], u[2], u[3], u[4], u[5]
	feedOK(t, s.Block(ctx, viewer, blocked))
	feedOK(t, s.Block(ctx, blocker, viewer))
	feedOK(t, s.Follow(ctx, viewer, author))
	post := feedPost(t, s, author, social.NewPost{Content: "talk"})
	var all []*social.Comment
	for _, by := range []string{x, blocked, y, blocker, blocked, x, blocker, y} {
		c, err := s.AddComment(ctx, by, post.ID, "by "+by)
		feedOK(t, err)
		all = append(all, c)
	}
	top := all[0]
	var answers []*social.Comment
	for _, by := range []string{blocked, y, blocker, x} {
		c, err := s.AddReply(ctx, by, post.ID, "answer by "+by, top.ID)
		feedOK(t, err)
		answers = append(answers, c)
	}
	drain(t, w)
	// Only the viewer is in blocks: everyone else sees every comment.
	seen := func(cs []*social.Comment, as string) []string {
		var out []string
		for _, c := range cs {
			if as != viewer || (c.AuthorID != blocked && c.AuthorID != blocker) {
				out = append(out, c.ID)
			}
		}
		return out
	}
	ids := func(cs []*social.Comment) []string {
		out := make([]string, len(cs))
		for i, c := range cs {
			out[i] = c.ID
		}
		return out
	}
	walk := func(viewer string, k readplan.ListKey) []string {
		var got []string
		for range 20 {
			pages, errs := s.ListPages(ctx, viewer, []readplan.ListKey{k})
			feedOK(t, errs[0])
			c := pages[0].Comments
			got = append(got, ids(c.Items)...)
			if !c.HasNext {
				return got
			}
			k.Page.After = c.EndCursor()
		}
		t.Fatal("too many pages")
		return nil
	}
	// The post's comments, answers included, newest first, as an
	// unfiltered read gives them.
	comments, err := s.PostCommentsPage(ctx, post.ID, social.PageRequest{First: 50})
	feedOK(t, err)
	order := comments.Items
	if len(order) != len(all)+len(answers) {
		t.Fatalf("the post has %d comments, want %d", len(order), len(all)+len(answers))
	}
	for _, v := range []struct {
		name, id string
	}{{"the viewer", viewer}, {"anonymous", ""}, {"outside the blocks", x}} {
		for first := 1; first <= 3; first++ {
			t.Run(fmt.Sprintf("%s, pages of %d", v.name, first), func(t *testing.T) {
				want := seen(order, v.id)
				if got := walk(v.id, readplan.ListKey{List: readplan.ListComments, Parent: post.ID, Page: social.PageRequest{First: first}}); !slices.Equal(got, want) {
					t.Errorf("comments %v, want %v", got, want)
				}
				want = seen(answers, v.id)
				if got := walk(v.id, readplan.ListKey{List: readplan.ListReplies, Parent: top.ID, With: post.ID, Page: social.PageRequest{First: first}}); !slices.Equal(got, want) {
					t.Errorf("answers %v, want %v", got, want)
				}
			})
		}
	}
	// The first comments a home page brings along: 2 come from the post
	// hash's packed comments, 6 from the comment rows.
	for _, n := range []int{2, 6} {
		pg, err := s.HomePage(ctx, viewer, social.PageRequest{First: 5}, readplan.PageWants{Comments: n})
		feedOK(t, err)
		c, ok := pg.Comments[post.ID]
		if !ok {
			t.Fatalf("home page with %d comments: none brought along", n)
		}
		for _, cm := range c.Items {
			if cm.AuthorID == blocked || cm.AuthorID == blocker {
				t.Errorf("home page with %d comments shows one by %s, across a block", n, cm.AuthorID)
			}
		}
		if want := seen(order, viewer); !slices.Equal(ids(c.Items), want[:min(len(want), len(c.Items))]) || len(c.Items) == 0 {
			t.Errorf("home page with %d comments brings %v, want the first of %v", n, ids(c.Items), want)
		}
	}
}
