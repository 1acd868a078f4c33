package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// lockAccount locks (or unlocks) id's account as updateProfile does: the
// flag, then, for an unlock, the approval of what is pending.
func lockAccount(tb testing.TB, s *redisstore.Store, id string, locked bool) {
	tb.Helper()
	ctx := context.Background()
	ps := redisstore.NewProfileService(s.DB)
	if _, err := ps.UpdateProfile(ctx, id, social.ProfileUpdate{Locked: &locked}); err != nil {
		tb.Fatal(err)
	}
	if !locked {
		if err := ps.ApprovePending(ctx, id); err != nil {
			tb.Fatal(err)
		}
	}
}

// requests reads the pending requests to follow id, newest first.
func requests(tb testing.TB, s *redisstore.Store, id string) []string {
	tb.Helper()
	c, err := s.FollowRequests(context.Background(), id, social.PageRequest{First: 100})
	if err != nil {
		tb.Fatal(err)
	}
	return c.Items
}

// followerIDs lists id's followers, newest first.
func followerIDs(tb testing.TB, s *redisstore.Store, id string) []string {
	tb.Helper()
	c, err := s.Followers(context.Background(), "", id, social.PageRequest{First: 100})
	if err != nil {
		tb.Fatal(err)
	}
	return c.Items
}

// TestFollowRequestFlow runs the requests to a locked account step by
// step: each step's error, then the pending requests, the followers, and
// whether the requester sees its request (viewerRequestedFollow).
func TestFollowRequestFlow(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	a, b, c := u[0], u[1], u[2]
	lockAccount(t, s, a, true)
	steps := []struct {
		name      string
		do        func() error
		code      social.Code
		requests  []string // pending, newest first
		followers []string
	}{
		{"b asks", func() error { return s.Follow(ctx, b, a) }, "", []string{b}, nil},
		{"b asks again", func() error { return s.Follow(ctx, b, a) }, "", []string{b}, nil},
		{"approve a user who did not ask", func() error { return s.ApproveFollowRequest(ctx, a, c) }, social.NotFound, []string{b}, nil},
		{"reject a user who did not ask", func() error { return s.RejectFollowRequest(ctx, a, c) }, social.NotFound, []string{b}, nil},
		{"approve a malformed id", func() error { return s.ApproveFollowRequest(ctx, a, "x") }, social.NotFound, []string{b}, nil},
		{"c asks", func() error { return s.Follow(ctx, c, a) }, "", []string{c, b}, nil},
		{"reject c", func() error { return s.RejectFollowRequest(ctx, a, c) }, "", []string{b}, nil},
		{"approve b", func() error { return s.ApproveFollowRequest(ctx, a, b) }, "", nil, []string{b}},
		{"approve b again", func() error { return s.ApproveFollowRequest(ctx, a, b) }, social.NotFound, nil, []string{b}},
		{"a follower follows again", func() error { return s.Follow(ctx, b, a) }, "", nil, []string{b}},
		{"c asks again", func() error { return s.Follow(ctx, c, a) }, "", []string{c}, []string{b}},
		{"c withdraws by unfollowing", func() error { return s.Unfollow(ctx, c, a) }, "", nil, []string{b}},
		{"c asks once more", func() error { return s.Follow(ctx, c, a) }, "", []string{c}, []string{b}},
		{"a blocks c: the request goes", func() error { return s.Block(ctx, a, c) }, "", nil, []string{b}},
		{"c cannot ask while blocked", func() error { return s.Follow(ctx, c, a) }, social.Forbidden, nil, []string{b}},
		{"unblock, c asks", func() error {
			if err := s.Unblock(ctx, a, c); err != nil {
				return err
			}
			return s.Follow(ctx, c, a)
		}, "", []string{c}, []string{b}},
		{"unlock approves c", func() error { lockAccount(t, s, a, false); return nil }, "", nil, []string{c, b}},
		{"an open account is followed at once", func() error { return s.Follow(ctx, a, c) }, "", nil, []string{c, b}},
	}
	for _, st := range steps {
		err := st.do()
		if got := social.ErrorCode(err); got != st.code {
			t.Fatalf("%s: error %v, want code %q", st.name, err, st.code)
		}
		if got := requests(t, s, a); !slices.Equal(got, st.requests) {
			t.Fatalf("%s: requests %v, want %v", st.name, got, st.requests)
		}
		if got := followerIDs(t, s, a); !slices.Equal(got, st.followers) {
			t.Fatalf("%s: followers %v, want %v", st.name, got, st.followers)
		}
		for _, r := range []string{b, c} {
			rel, err := s.Relations(ctx, r, []string{a})
			if err != nil {
				t.Fatal(err)
			}
			if want := slices.Contains(st.requests, r); rel[0].ViewerRequested != want {
				t.Fatalf("%s: %s's viewerRequestedFollow = %v, want %v", st.name, r, rel[0].ViewerRequested, want)
			}
		}
	}
	// The notifications follow the requests (kinds and actors, sorted):
	// none pending, none told;
	// the approved follows are FOLLOWs.
	lockAccount(t, s, c, true)
	if err := s.Follow(ctx, b, c); err != nil {
		t.Fatal(err)
	}
	drain(t, w)
	kinds := func(id string) string {
		n, err := s.Notifications(ctx, id, social.PageRequest{First: 10}, 3)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, x := range n.Items {
			out = append(out, fmt.Sprint(x.Kind, x.Actors))
		}
		slices.Sort(out) // the order of jobs of two queues is not fixed
		return strings.Join(out, " ")
	}
	if got, want := kinds(c), "FOLLOW["+a+"] FOLLOW_REQUEST["+b+"]"; got != want {
		t.Fatalf("c's notifications %q, want %q", got, want)
	}
	if got, want := kinds(a), "FOLLOW["+c+" "+b+"]"; got != want {
		t.Fatalf("a's notifications %q, want %q", got, want)
	}
	if err := s.RejectFollowRequest(ctx, c, b); err != nil {
		t.Fatal(err)
	}
	drain(t, w)
	if got, want := kinds(c), "FOLLOW["+a+"]"; got != want {
		t.Fatalf("after the rejection, c's notifications %q, want %q", got, want)
	}
}

// TestLockedAudience: a locked account's posts, written before and after
// the lock, are seen by its followers and itself only, on every read of
// the store: post(id), the user page (anonymous too), the home page in
// each mode, a tag page, live checks, a repost's original and mentions;
// tags of its posts count for no trend; unlocking shows them again.
func TestLockedAudience(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			cfg := feedConfig(mode)
			cfg.CelebrityThreshold = 1 // hybrid: the author is pulled
			s, rdb := feedStore(t, cfg)
			w := feedWorker(t, s, rdb)
			ctx := context.Background()
			u := feedUsers(t, s, 4)
			author, fan, other, mentioned := u[0], u[1], u[2], u[3]
			for _, f := range []string{fan, other} {
				if err := s.Follow(ctx, f, author); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.Follow(ctx, other, fan); err != nil {
				t.Fatal(err)
			}
			before := feedPost(t, s, author, social.NewPost{Content: "before the lock #locktag"})
			drain(t, w)
			lockAccount(t, s, author, true)
			if err := s.RemoveFollower(ctx, author, other); err != nil {
				t.Fatal(err)
			}
			after := feedPost(t, s, author, social.NewPost{Content: "after the lock #locktag @u3_" + strings.ReplaceAll(t.Name(), "/", "_")})
			repost := feedPost(t, s, fan, social.NewPost{RepostOf: after.ID})
			drain(t, w)

			posts := []string{after.ID, before.ID}
			for _, tc := range []struct {
				name   string
				viewer string
				sees   bool
			}{{"author", author, true}, {"follower", fan, true}, {"non-follower", other, false}, {"anonymous", "", false}} {
				got, err := s.VisiblePosts(ctx, tc.viewer, posts)
				feedOK(t, err)
				for i, p := range got {
					if (p != nil) != tc.sees {
						t.Errorf("%s: post(%s) = %v, want seen %v", tc.name, posts[i], p, tc.sees)
					}
				}
				c, err := userPostIDs(ctx, s, tc.viewer, author, social.PageRequest{First: 10})
				feedOK(t, err)
				if want := posts[:0]; tc.sees {
					want = posts
					if fmt.Sprint(c.Items) != fmt.Sprint(want) {
						t.Errorf("%s: user page %v, want %v", tc.name, c.Items, want)
					}
				} else if len(c.Items) != 0 || c.HasNext {
					t.Errorf("%s: user page %v (next %v), want empty", tc.name, c.Items, c.HasNext)
				}
				tag, err := s.TagPage(ctx, tc.viewer, "locktag", social.PageRequest{First: 10}, readplan.PageWants{})
				feedOK(t, err)
				if n := len(tag.Posts.Items); (n == 2) != tc.sees || (n != 0 && n != 2) {
					t.Errorf("%s: tag page holds %d posts, want seen %v", tc.name, n, tc.sees)
				}
				if tc.viewer != "" && tc.viewer != author {
					live, err := s.LivePosts(ctx, tc.viewer, []string{after.ID + ":" + author})
					feedOK(t, err)
					// The live check also asks the home rule: the follower
					// follows, the other does not any more.
					if (live[0] != nil) != tc.sees {
						t.Errorf("%s: live post %v, want seen %v", tc.name, live[0], tc.sees)
					}
				}
			}
			// other follows fan, whose repost reaches other's home: the
			// repost is fan's, its original stays hidden.
			home, err := s.HomePage(ctx, other, social.PageRequest{First: 10}, readplan.PageWants{Reposts: true})
			feedOK(t, err)
			for _, p := range home.Posts.Items {
				if p.AuthorID == author {
					t.Errorf("non-follower's home shows the locked author's post %s", p.ID)
				}
				if p.ID == repost.ID && home.Originals[after.ID] != nil {
					t.Errorf("non-follower's home shows the locked original through a repost")
				}
			}
			if got, err := s.VisiblePosts(ctx, other, []string{repost.ID}); err != nil || got[0] == nil {
				t.Errorf("the repost itself: %v, %v", got, err)
			}
			home, err = s.HomePage(ctx, fan, social.PageRequest{First: 10}, readplan.PageWants{Reposts: true})
			feedOK(t, err)
			if ids := social.PostIDs(home.Posts).Items; !slices.Contains(ids, after.ID) || !slices.Contains(ids, before.ID) {
				t.Errorf("follower's home %v lacks the locked author's posts", ids)
			}
			// The mention of a user who does not follow tells them nothing.
			n, err := s.Notifications(ctx, mentioned, social.PageRequest{First: 10}, 1)
			feedOK(t, err)
			if len(n.Items) != 0 {
				t.Errorf("a non-follower mentioned by a locked account got %+v", n.Items[0])
			}
			// The post made while locked counts for no trend; the one
			// before does.
			members, err := rdb.ZRange(ctx, s.Keys().TagPosts("locktag"), 0, -1).Result()
			feedOK(t, err)
			if want := []string{before.ID + ":" + author, after.ID + ":" + author + ":n"}; !slices.Equal(members, want) {
				t.Errorf("tag index %v, want %v", members, want)
			}

			lockAccount(t, s, author, false)
			got, err := s.VisiblePosts(ctx, "", posts)
			feedOK(t, err)
			if got[0] == nil || got[1] == nil {
				t.Errorf("after the unlock, anonymous sees %v", got)
			}
		})
	}
}

// TestLockedUserPageConstant: a non-follower's page of a locked account
// with many posts is empty at once, without reading them: one window
// read (one round trip) answers nothing, and the page ends with no next.
func TestLockedUserPageConstant(t *testing.T) {
	s, rdb := feedStore(t)
	cnt := &tripCounter{}
	rdb.AddHook(cnt)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	author, reader := u[0], u[1]
	for i := 0; i < 300; i++ {
		feedPost(t, s, author, social.NewPost{Content: fmt.Sprint("post ", i)})
	}
	lockAccount(t, s, author, true)
	for _, viewer := range []string{"", reader} {
		var c social.Connection[string]
		trips := cnt.trips(t, func() (err error) {
			c, err = userPostIDs(ctx, s, viewer, author, social.PageRequest{First: 100})
			return err
		})
		if len(c.Items) != 0 || c.HasNext || c.EndCursor() != "" {
			t.Fatalf("viewer %q: page %v (next %v), want empty", viewer, c.Items, c.HasNext)
		}
		if trips != 1 {
			t.Errorf("viewer %q: the empty page took %d round trips, want 1", viewer, trips)
		}
	}
}
