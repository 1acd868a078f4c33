package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// bookmarkIDs reads every page of a viewer's bookmarks, first a page.
func bookmarkIDs(tb testing.TB, s *redisstore.Store, viewer string, first int) []string {
	tb.Helper()
	return allPages(tb, first, func(p social.PageRequest) (social.Connection[string], error) {
		pg, err := s.BookmarksPage(context.Background(), viewer, p, readplan.PageWants{})
		if err != nil {
			return social.Connection[string]{}, err
		}
		return social.PostIDs(pg.Posts), nil
	})
}

func wantCode(tb testing.TB, what string, err error, code social.Code) {
	tb.Helper()
	if social.ErrorCode(err) != code {
		tb.Fatalf("%s: %v, want %s", what, err, code)
	}
}

func TestBookmarks(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	reader, author, blocker := u[0], u[1], u[2]
	a := feedPost(t, s, author, social.NewPost{})
	b := feedPost(t, s, author, social.NewPost{})
	c := feedPost(t, s, blocker, social.NewPost{})
	secret := feedPost(t, s, author, social.NewPost{OnlyTo: []string{blocker}})
	gone := feedPost(t, s, author, social.NewPost{})

	tests := []struct {
		name string
		post string
		code social.Code
	}{
		{"a public post", a.ID, ""},
		{"again: idempotent", a.ID, ""},
		{"a second post", b.ID, ""},
		{"a post whose author blocks the reader later", c.ID, ""},
		{"a post deleted later", gone.ID, ""},
		{"a post hidden by its audience", secret.ID, social.NotFound},
		{"no such post", "999999", social.NotFound},
		{"not an id", "x", social.NotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wantCode(t, "bookmark", s.Bookmark(ctx, reader, tt.post), tt.code)
		})
	}
	marks, err := s.Marks(ctx, reader, []string{a.ID, secret.ID})
	feedOK(t, err)
	if !marks[0].Bookmarked || marks[1].Bookmarked {
		t.Fatalf("marks %+v: want the bookmark of %s only", marks, a.ID)
	}
	if m, _ := s.Marks(ctx, author, []string{a.ID}); m[0].Bookmarked {
		t.Fatal("a bookmark shows to another user: bookmarks are private")
	}
	// The bookmark of b comes after a's: newest bookmarked first, then
	// a re-bookmark of a keeps its place.
	feedOK(t, s.Block(ctx, blocker, reader))
	feedOK(t, s.DeletePost(ctx, author, gone.ID))
	drain(t, w)
	if got, want := bookmarkIDs(t, s, reader, 1), []string{b.ID, a.ID}; !slices.Equal(got, want) {
		t.Fatalf("bookmarks %v, want %v (newest bookmarked first, blocked and deleted left out)", got, want)
	}
	if n, _ := rdb.ZCard(ctx, s.Keys().Bookmarks(reader)).Result(); n != 3 {
		t.Fatalf("deleting a post left %d bookmarks, want 3 (the deleted one gone)", n)
	}
	feedOK(t, s.Unbookmark(ctx, reader, a.ID))
	feedOK(t, s.Unbookmark(ctx, reader, a.ID))
	if got := bookmarkIDs(t, s, reader, 5); !slices.Equal(got, []string{b.ID}) {
		t.Fatalf("after unbookmark: %v", got)
	}
	feedOK(t, s.DeleteUserBookmarks(ctx, reader))
	if got := bookmarkIDs(t, s, reader, 5); len(got) != 0 {
		t.Fatalf("after DeleteUserBookmarks: %v", got)
	}
	if m, _ := s.Marks(ctx, reader, []string{b.ID}); m[0].Bookmarked {
		t.Fatal("DeleteUserBookmarks left the flag")
	}
}

func TestPins(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	me, other := u[0], u[1]
	var mine []string
	for range 6 {
		mine = append(mine, feedPost(t, s, me, social.NewPost{}).ID)
	}
	theirs := feedPost(t, s, other, social.NewPost{})
	boost, err := s.CreatePost(ctx, me, social.NewPost{RepostOf: theirs.ID})
	feedOK(t, err)
	quote := feedPost(t, s, me, social.NewPost{RepostOf: theirs.ID, Content: "my words"})

	tests := []struct {
		name string
		post string
		code social.Code
	}{
		{"own post 1", mine[0], ""},
		{"own post 1 again", mine[0], ""},
		{"another user's post", theirs.ID, social.Forbidden},
		{"a plain repost of another user's post", boost.ID, social.BadUserInput},
		{"a repost with own words", quote.ID, ""},
		{"own post 2", mine[1], ""},
		{"own post 3", mine[2], ""},
		{"own post 4", mine[3], ""},
		{"a sixth pin", mine[4], social.BadUserInput},
		{"no such post", "999999", social.NotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantCode(t, "pin", s.Pin(ctx, me, tt.post), tt.code) })
	}
	ids, err := s.PinnedIDs(ctx, []string{me, other})
	feedOK(t, err)
	want := []string{mine[3], mine[2], mine[1], quote.ID, mine[0]}
	if !slices.Equal(ids[0], want) || len(ids[1]) != 0 {
		t.Fatalf("pins %v, want %v and none (a sixth pin changes nothing)", ids, want)
	}
	posts, err := s.VisiblePosts(ctx, other, []string{mine[0], mine[4]})
	feedOK(t, err)
	if !posts[0].Pinned || posts[1].Pinned {
		t.Fatal("Post.pinned does not follow the pins")
	}
	feedOK(t, s.Unpin(ctx, me, mine[1]))
	feedOK(t, s.Unpin(ctx, me, mine[1]))
	feedOK(t, s.Pin(ctx, me, mine[4]))
	feedOK(t, s.DeletePost(ctx, me, mine[0]))
	drain(t, w)
	ids, _ = s.PinnedIDs(ctx, []string{me})
	if want := []string{mine[4], mine[3], mine[2], quote.ID}; !slices.Equal(ids[0], want) {
		t.Fatalf("pins after unpin, pin and delete: %v, want %v", ids[0], want)
	}
	feedOK(t, s.DeleteUserPins(ctx, me))
	if ids, _ = s.PinnedIDs(ctx, []string{me}); len(ids[0]) != 0 {
		t.Fatalf("DeleteUserPins left %v", ids[0])
	}
}

// listIDs reads every page of a list's timeline.
func listIDs(tb testing.TB, s *redisstore.Store, owner, lid string, first int) []string {
	tb.Helper()
	return allPages(tb, first, func(p social.PageRequest) (social.Connection[string], error) {
		pg, err := s.ListPage(context.Background(), owner, lid, p, readplan.PageWants{})
		if err != nil {
			return social.Connection[string]{}, err
		}
		return social.PostIDs(pg.Posts), nil
	})
}

func TestListsRules(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 4)
	owner, friend, stranger, other := u[0], u[1], u[2], u[3]
	feedOK(t, s.Follow(ctx, owner, friend))
	l, err := s.CreateList(ctx, owner, "  Friends  ")
	feedOK(t, err)
	if l.Title != "Friends" {
		t.Fatalf("title %q", l.Title)
	}
	theirs, err := s.CreateList(ctx, other, "Theirs")
	feedOK(t, err)
	tests := []struct {
		name string
		err  error
		code social.Code
	}{
		{"empty title", func() error { _, err := s.CreateList(ctx, owner, " "); return err }(), social.BadUserInput},
		{"add a user not followed", func() error { _, err := s.AddToList(ctx, owner, l.ID, []string{friend, stranger}); return err }(), social.BadUserInput},
		{"add to someone else's list", func() error { _, err := s.AddToList(ctx, owner, theirs.ID, []string{friend}); return err }(), social.NotFound},
		{"rename someone else's list", func() error { _, err := s.RenameList(ctx, owner, theirs.ID, "x"); return err }(), social.NotFound},
		{"delete someone else's list", s.DeleteList(ctx, owner, theirs.ID), social.NotFound},
		{"read someone else's list", func() error {
			_, err := s.ListPage(ctx, owner, theirs.ID, social.PageRequest{First: 5}, readplan.PageWants{})
			return err
		}(), social.NotFound},
		{"no users", func() error { _, err := s.AddToList(ctx, owner, l.ID, nil); return err }(), social.BadUserInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantCode(t, tt.name, tt.err, tt.code) })
	}
	// Nothing changed: the list has no member, the other list its title.
	if lists, _ := s.Lists(ctx, other); len(lists) != 1 || lists[0].Title != "Theirs" {
		t.Fatalf("someone else's lists changed: %+v", lists)
	}
	if n, _ := s.Client().ZCard(ctx, s.Keys().ListMembers(owner, l.ID)).Result(); n != 0 {
		t.Fatalf("a refused add left %d members", n)
	}
	if n, _ := s.Client().Exists(ctx, s.Keys().ListedIn(friend)).Result(); n != 0 {
		t.Fatal("a refused add left a ListedIn entry")
	}
}

func TestListCaps(t *testing.T) {
	s, rdb := feedStore(t)
	ctx := context.Background()
	owner := feedUsers(t, s, 1)[0]
	// 501 followees written straight into Following: the cap is the
	// subject, not the follows.
	var users []string
	for i := range social.MaxListMembers + 1 {
		users = append(users, fmt.Sprint(100000+i))
		feedOK(t, rdb.ZAdd(ctx, s.Keys().Following(owner), redisZ(users[i])).Err())
	}
	l, err := s.CreateList(ctx, owner, "big")
	feedOK(t, err)
	_, err = s.AddToList(ctx, owner, l.ID, users[:social.MaxListMembers])
	feedOK(t, err)
	_, err = s.AddToList(ctx, owner, l.ID, users[social.MaxListMembers:])
	wantCode(t, "the 501st member", err, social.BadUserInput)
	_, err = s.AddToList(ctx, owner, l.ID, users[:3])
	feedOK(t, err) // members already in take no room
	if n, _ := rdb.ZCard(ctx, s.Keys().ListMembers(owner, l.ID)).Result(); n != social.MaxListMembers {
		t.Fatalf("%d members", n)
	}
	for range social.MaxLists - 1 {
		_, err := s.CreateList(ctx, owner, "l")
		feedOK(t, err)
	}
	_, err = s.CreateList(ctx, owner, "one too many")
	wantCode(t, "the 101st list", err, social.BadUserInput)
}

func TestListTimeline(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 4)
	owner, a, b, c := u[0], u[1], u[2], u[3]
	for _, x := range []string{a, b, c} {
		feedOK(t, s.Follow(ctx, owner, x))
	}
	early := feedPost(t, s, a, social.NewPost{}) // before the list: backfilled
	// Before the list too, but hidden from the owner: the backfill reads
	// the owner's view of a's posts and leaves them out.
	earlyHidden := []string{
		feedPost(t, s, a, social.NewPost{OnlyTo: []string{b}}).ID,
		feedPost(t, s, a, social.NewPost{NotTo: []string{owner}}).ID,
	}
	l, err := s.CreateList(ctx, owner, "ab")
	feedOK(t, err)
	_, err = s.AddToList(ctx, owner, l.ID, []string{a, b})
	feedOK(t, err)
	for _, id := range earlyHidden {
		if err := rdb.ZScore(ctx, s.Keys().ListFeed(owner, l.ID), id+":"+a).Err(); !errors.Is(err, redis.Nil) {
			t.Fatalf("the backfill put post %s, hidden from the owner, in the list's feed (%v)", id, err)
		}
	}
	var want []string
	for i := range 6 {
		want = append(want, feedPost(t, s, []string{a, b}[i%2], social.NewPost{}).ID)
	}
	feedPost(t, s, c, social.NewPost{}) // not a member
	hidden := feedPost(t, s, a, social.NewPost{OnlyTo: []string{b}})
	drain(t, w)
	_ = hidden
	want = append(want, early.ID)
	want = byNewest(want)
	if got := listIDs(t, s, owner, l.ID, 2); !slices.Equal(got, want) {
		t.Fatalf("list timeline %v, want %v", got, want)
	}
	// Newer pages, both ways.
	pg, err := s.ListPage(ctx, owner, l.ID, social.PageRequest{First: 2, Before: social.EncodeCursor(want[4])}, readplan.PageWants{})
	feedOK(t, err)
	if got := social.PostIDs(pg.Posts); !slices.Equal(got.Items, want[2:4]) || !got.HasPrevious || got.HasNext {
		t.Fatalf("newer page %+v, want %v with hasPrevious", got, want[2:4])
	}
	// A mute hides the author; a deleted post leaves; an unfollow takes
	// the member out of the list.
	feedOK(t, s.Mute(ctx, owner, b))
	byA := want[0]
	if p, _ := s.VisiblePosts(ctx, owner, []string{byA}); p[0].AuthorID != a {
		byA = want[1]
	}
	feedOK(t, s.DeletePost(ctx, a, byA))
	drain(t, w)
	for _, id := range listIDs(t, s, owner, l.ID, 3) {
		if p, _ := s.VisiblePosts(ctx, owner, []string{id}); p[0] == nil || p[0].AuthorID != a {
			t.Fatalf("post %s of a muted author or deleted shows", id)
		}
	}
	if n, _ := rdb.ZScore(ctx, s.Keys().ListFeed(owner, l.ID), byA+":"+a).Result(); n != 0 {
		t.Fatal("a deleted post stays in the list's feed")
	}
	feedOK(t, s.Unfollow(ctx, owner, a))
	drain(t, w)
	if got := listIDs(t, s, owner, l.ID, 3); len(got) != 0 {
		t.Fatalf("after unfollowing a, and muting b: %v", got)
	}
	if in, _ := rdb.SIsMember(ctx, s.Keys().ListedIn(a), owner+":"+l.ID).Result(); in {
		t.Fatal("an unfollowed member keeps the ListedIn entry")
	}
	feedOK(t, s.DeleteUserLists(ctx, owner))
	if lists, _ := s.Lists(ctx, owner); len(lists) != 0 {
		t.Fatalf("DeleteUserLists left %v", lists)
	}
}

// TestListPageRoundTrips: a page of 20 of a list of 500 members costs the
// round trips of a page of a list of 2.
func TestListPageRoundTrips(t *testing.T) {
	s, w, cnt, u := tripStore(t, 31)
	ctx := context.Background()
	owner, members := u[0], u[1:]
	for _, m := range members {
		feedOK(t, s.Follow(ctx, owner, m))
	}
	small, _ := s.CreateList(ctx, owner, "small")
	big, _ := s.CreateList(ctx, owner, "big")
	_, err := s.AddToList(ctx, owner, small.ID, members[:2])
	feedOK(t, err)
	// The big list: 30 real members, and fillers up to 500 (followed by
	// a write of Following, as the cap test does).
	ids := slices.Clone(members)
	for i := len(ids); i < social.MaxListMembers; i++ {
		ids = append(ids, fmt.Sprint(200000+i))
		feedOK(t, s.Client().ZAdd(ctx, s.Keys().Following(owner), redisZ(ids[i])).Err())
	}
	_, err = s.AddToList(ctx, owner, big.ID, ids)
	feedOK(t, err)
	for i := range 45 {
		feedPost(t, s, members[i%len(members)], social.NewPost{})
	}
	drain(t, w)
	feedOK(t, s.LoadScripts(ctx))
	w20 := readplan.PageWants{Authors: true, Counts: true, Marks: true}
	trips := func(lid string) int64 {
		return cnt.trips(t, func() error {
			pg, err := s.ListPage(ctx, owner, lid, social.PageRequest{First: 20}, w20)
			if err == nil && lid == big.ID && len(pg.Posts.Items) != 20 {
				err = fmt.Errorf("big list page of %d posts", len(pg.Posts.Items))
			}
			return err
		})
	}
	a, b := trips(small.ID), trips(big.ID)
	t.Logf("a list page of 20 with authors, counters and marks: %d round trips with 2 members, %d with %d", a, b, social.MaxListMembers)
	if a != b || b > 3 {
		t.Fatalf("list page: %d round trips with 2 members, %d with %d: want the same, at most 3", a, b, social.MaxListMembers)
	}
}

// redisZ is a followee entry of Following, followed now.
func redisZ(id string) redis.Z { return redis.Z{Score: float64(time.Now().UnixMilli()), Member: id} }
