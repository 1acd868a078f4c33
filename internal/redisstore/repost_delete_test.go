package redisstore_test

import (
	"context"
	"slices"
	"testing"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// Deleting a post deletes its plain reposts everywhere: the reposter's
// timeline and postsCount, the home lists they were fanned into. A quote
// stays, its repostOf null. A plain repost written after its original's
// delete job ran goes at its own fan-out.
func TestDeletePostTakesPlainReposts(t *testing.T) {
	for _, mode := range []redisstore.FeedMode{redisstore.Push, redisstore.Pull, redisstore.Hybrid} {
		t.Run(string(mode), func(t *testing.T) {
			s, rdb := feedStore(t, feedConfig(mode))
			w := feedWorker(t, s, rdb)
			ctx := context.Background()
			u := feedUsers(t, s, 4)
			a, c, d, q := u[0], u[1], u[2], u[3]
			if err := s.Follow(ctx, d, c); err != nil {
				t.Fatal(err)
			}
			if err := s.Follow(ctx, d, q); err != nil {
				t.Fatal(err)
			}
			o := feedPost(t, s, a, social.NewPost{})
			plain, err := s.CreatePost(ctx, c, social.NewPost{RepostOf: o.ID})
			if err != nil {
				t.Fatal(err)
			}
			quote := feedPost(t, s, q, social.NewPost{Content: "look", RepostOf: o.ID})
			drain(t, w)
			if home := homeList(t, s, d); !slices.Contains(home, plain.ID) {
				t.Fatalf("before: D's home %v lacks the repost %s", home, plain.ID)
			}

			if err := s.DeletePost(ctx, a, o.ID); err != nil {
				t.Fatal(err)
			}
			drain(t, w)

			if home := homeList(t, s, d); slices.Contains(home, plain.ID) || !slices.Contains(home, quote.ID) {
				t.Errorf("D's home = %v, want the quote %s and not the repost %s", home, quote.ID, plain.ID)
			}
			if raw, _ := rdb.LRange(ctx, s.Keys().Home(d), 0, -1).Result(); slices.Contains(raw, plain.ID+":"+c) {
				t.Errorf("D's home list still holds the repost: %v", raw)
			}
			if posts := userList(t, s, c, c); len(posts) != 0 {
				t.Errorf("C's posts = %v, want none", posts)
			}
			counts, err := s.UserCounts(ctx, []string{c})
			if err != nil {
				t.Fatal(err)
			}
			if counts[0].Posts != 0 || counts[0].PublicPosts != 0 {
				t.Errorf("C's counts = %+v, want no posts", counts[0])
			}
			got, err := s.VisiblePosts(ctx, d, []string{plain.ID, quote.ID})
			if err != nil {
				t.Fatal(err)
			}
			if got[0] != nil {
				t.Errorf("the plain repost is still there: %+v", got[0])
			}
			if got[1] == nil {
				t.Fatal("the quote went with its original")
			}
		})
	}
}

// A plain repost the original's delete job did not find listed (its hash
// written after the job's walk) is removed at its own fan-out.
func TestLatePlainRepostGoesAtFanout(t *testing.T) {
	s, rdb := feedStore(t, feedConfig(redisstore.Push))
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	a, c, d := u[0], u[1], u[2]
	if err := s.Follow(ctx, d, c); err != nil {
		t.Fatal(err)
	}
	o := feedPost(t, s, a, social.NewPost{})
	drain(t, w)
	plain, err := s.CreatePost(ctx, c, social.NewPost{RepostOf: o.ID})
	if err != nil {
		t.Fatal(err)
	}
	// The walk found no claim: as if the repost's write came after it.
	if err := rdb.Del(ctx, s.Keys().PostPlainReposts(o.ID)).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.DeletePost(ctx, a, o.ID); err != nil {
		t.Fatal(err)
	}
	drain(t, w)
	if home := homeList(t, s, d); slices.Contains(home, plain.ID) {
		t.Errorf("D's home = %v, still with the repost %s", home, plain.ID)
	}
	if posts := userList(t, s, c, c); len(posts) != 0 {
		t.Errorf("C's posts = %v, want none", posts)
	}
}

// homeList is the ids of the first 100 posts of viewer's home timeline.
func homeList(t *testing.T, s *redisstore.Store, viewer string) []string {
	t.Helper()
	c, err := homeIDs(context.Background(), s, viewer, social.PageRequest{First: 100})
	if err != nil {
		t.Fatal(err)
	}
	return c.Items
}

// userList is the ids of the first 100 posts of user's timeline, as
// viewer sees it.
func userList(t *testing.T, s *redisstore.Store, viewer, user string) []string {
	t.Helper()
	c, err := userPostIDs(context.Background(), s, viewer, user, social.PageRequest{First: 100})
	if err != nil {
		t.Fatal(err)
	}
	return c.Items
}
