package redisstore_test

import (
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstats"
	"github.com/socialgw/gateway/internal/social"
)

// TestListPagesBatch reads lists of every kind for several parents in one
// call and checks each page against the single-parent read, the errors
// per key, and that the batch costs one round trip (two with common
// following, whose chunks are checked in a second one).
func TestListPagesBatch(t *testing.T) {
	s, rdb := graphStore(t)
	ctx := context.Background()
	u := graphUsers(t, s, 6)
	for i, a := range u {
		for j, b := range u {
			if i != j && (i+j)%3 != 0 {
				if err := s.Follow(ctx, a, b); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	post, err := s.CreatePost(ctx, u[0], social.NewPost{Content: "liked"})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range u[1:] {
		if err := s.Like(ctx, a, post.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := s.AddComment(ctx, a, post.ID, "c by "+a); err != nil {
			t.Fatal(err)
		}
	}
	p := social.PageRequest{First: 2}
	var keys []readplan.ListKey
	for _, id := range u[:3] {
		keys = append(keys,
			readplan.ListKey{List: readplan.ListFollowers, Parent: id, Page: p},
			readplan.ListKey{List: readplan.ListFollowing, Parent: id, Page: p})
	}
	keys = append(keys,
		readplan.ListKey{List: readplan.ListLikers, Parent: post.ID, Page: p},
		readplan.ListKey{List: readplan.ListComments, Parent: post.ID, Page: p},
		readplan.ListKey{List: readplan.ListFollowers, Parent: u[1], Page: social.PageRequest{First: 2, After: "nope"}},
		readplan.ListKey{List: readplan.ListCommonFollowing, Parent: u[1], With: "999999", Page: p},
	)
	single := func(k readplan.ListKey) (readplan.ListPage, error) {
		switch k.List {
		case readplan.ListFollowers:
			c, err := s.Followers(ctx, "", k.Parent, k.Page)
			return readplan.ListPage{Users: c}, err
		case readplan.ListFollowing:
			c, err := s.Following(ctx, "", k.Parent, k.Page)
			return readplan.ListPage{Users: c}, err
		case readplan.ListLikers:
			c, err := s.Likers(ctx, k.Parent, k.Page)
			return readplan.ListPage{Users: c}, err
		case readplan.ListComments:
			c, err := s.PostCommentsPage(ctx, k.Parent, k.Page)
			return readplan.ListPage{Comments: c}, err
		}
		c, err := s.CommonFollowing(ctx, k.Parent, k.With, k.Page)
		return readplan.ListPage{Users: c}, err
	}
	hook := redisstats.NewHook(nil)
	hook.Install(rdb)
	for _, withCommon := range []bool{false, true} {
		t.Run(fmt.Sprint("common following: ", withCommon), func(t *testing.T) {
			ks := keys[:len(keys):len(keys)]
			want := int64(1)
			if withCommon {
				ks = append(ks, readplan.ListKey{List: readplan.ListCommonFollowing, Parent: u[1], With: u[2], Page: p})
				want = 2
			}
			s.ListPages(ctx, "", ks) // load the scripts
			before := hook.Total.RoundTrips()
			pages, errs := s.ListPages(ctx, "", ks)
			if rt := hook.Total.RoundTrips() - before; rt != want {
				t.Errorf("%d keys took %d round trips, want %d", len(ks), rt, want)
			}
			for i, k := range ks {
				pg, err := single(k)
				if social.ErrorCode(err) != social.ErrorCode(errs[i]) || (err == nil) != (errs[i] == nil) {
					t.Fatalf("%+v: error %v, alone %v", k, errs[i], err)
				}
				if err == nil && !reflect.DeepEqual(pg, pages[i]) {
					t.Fatalf("%+v: batched %+v, alone %+v", k, pages[i], pg)
				}
			}
			if c := pages[len(keys)-3]; c.Comments.Total != 5 || len(c.Comments.Items) != 2 || !c.Comments.HasNext {
				t.Errorf("comments page: %+v", c.Comments)
			}
			if social.ErrorCode(errs[len(keys)-2]) != social.BadUserInput {
				t.Errorf("bad cursor: %v", errs[len(keys)-2])
			}
			if social.ErrorCode(errs[len(keys)-1]) != social.NotFound {
				t.Errorf("unknown other user: %v", errs[len(keys)-1])
			}
			if withCommon && len(pages[len(ks)-1].Users.Items) == 0 {
				t.Errorf("no common following of %s and %s", u[1], u[2])
			}
		})
	}
}

// TestListPagesBlocks checks the lists a block hides from the blocked
// viewer: the blocker's followers and following, and any common following
// that involves the blocker; other viewers and the blocker see them.
func TestListPagesBlocks(t *testing.T) {
	s, _ := graphStore(t)
	ctx := context.Background()
	u := graphUsers(t, s, 5)
	blocker, blocked, other, x, y := u[0], u[1], u[2], u[3], u[4]
	for _, f := range [][2]string{{blocker, x}, {blocker, y}, {other, x}, {x, blocker}} {
		feedOK(t, s.Follow(ctx, f[0], f[1]))
	}
	feedOK(t, s.Block(ctx, blocker, blocked))
	p := social.PageRequest{First: 5}
	keys := []readplan.ListKey{
		{List: readplan.ListFollowers, Parent: blocker, Page: p},
		{List: readplan.ListFollowing, Parent: blocker, Page: p},
		{List: readplan.ListCommonFollowing, Parent: blocker, With: other, Page: p},
		{List: readplan.ListCommonFollowing, Parent: other, With: blocker, Page: p},
	}
	for _, tc := range []struct {
		viewer string
		hidden bool
	}{{blocked, true}, {other, false}, {blocker, false}, {"", false}} {
		pages, errs := s.ListPages(ctx, tc.viewer, keys)
		for i, pg := range pages {
			if errs[i] != nil {
				t.Fatalf("viewer %q, %+v: %v", tc.viewer, keys[i], errs[i])
			}
			if empty := len(pg.Users.Items) == 0 && pg.Users.Total == 0; empty != tc.hidden {
				t.Errorf("viewer %q, %s of %s: %+v, hidden %v", tc.viewer, keys[i].List, keys[i].Parent, pg.Users, tc.hidden)
			}
		}
	}
}
