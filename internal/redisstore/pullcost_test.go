package redisstore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstats"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// TestPulledPageCostFollowsPage counts the Redis commands of a 20-post
// home page, with what the reference query brings along, for a reader
// following 1 pulled author and for one following 200: the cost must
// follow the page, not the candidates every author offers. The target:
// 200 authors within twice the cost of 1 plus 2 commands per author — in
// hybrid mode (celebrities pulled at read time) and for pull mode's first
// page (the list filled from every followee).
func TestPulledPageCostFollowsPage(t *testing.T) {
	w := readplan.PageWants{Authors: true, Counts: true, Marks: true, Comments: 3, CommentAuthors: true, Reposts: true, OriginalAuthors: true}
	cost := func(t *testing.T, mode redisstore.FeedMode, authors, posts int) (int64, int) {
		cfg := feedConfig(mode)
		cfg.CelebrityThreshold = 0 // every followed author is pulled (hybrid)
		s, rdb := feedStore(t, cfg)
		wk := feedWorker(t, s, rdb)
		ctx := context.Background()
		u := feedUsers(t, s, authors+1)
		reader := u[0]
		for _, a := range u[1:] {
			feedOK(t, s.Follow(ctx, reader, a))
		}
		for p := 0; p < posts; p++ {
			for _, a := range u[1:] {
				post := feedPost(t, s, a, social.NewPost{Content: fmt.Sprint("post ", p)})
				if p%2 == 0 {
					_, err := s.AddComment(ctx, reader, post.ID, "seen")
					feedOK(t, err)
				}
			}
		}
		drain(t, wk)
		page := func() *readplan.Page {
			pg, err := s.HomePage(ctx, reader, social.PageRequest{First: 20}, w)
			feedOK(t, err)
			return pg
		}
		page() // warm the scripts, and a hybrid reader's list
		hook := redisstats.NewHook(nil)
		hook.Install(rdb)
		pg := page()
		return hook.Total.Commands(), len(pg.Posts.Items)
	}
	for _, mode := range []redisstore.FeedMode{redisstore.Hybrid, redisstore.Pull} {
		t.Run(string(mode), func(t *testing.T) {
			one, n1 := cost(t, mode, 1, 30)
			many, n200 := cost(t, mode, 200, 3)
			t.Logf("%s: 1 pulled author: %d commands; 200: %d (limit %d)", mode, one, many, 2*one+2*200)
			if n1 != 20 || n200 != 20 {
				t.Fatalf("pages of %d and %d posts, want 20", n1, n200)
			}
			if many > 2*one+2*200 {
				t.Errorf("200 pulled authors cost %d commands, more than twice the %d of 1 plus 2 per author", many, one)
			}
		})
	}
}
