package redisstore_test

import (
	"context"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// visibleIDs reads ids as viewer may see them and returns the ids seen.
func visibleIDs(tb testing.TB, s *redisstore.Store, viewer string, ids ...string) []string {
	tb.Helper()
	posts, err := s.VisiblePosts(context.Background(), viewer, ids)
	if err != nil {
		tb.Fatal(err)
	}
	var out []string
	for _, p := range posts {
		if p != nil {
			out = append(out, p.ID)
		}
	}
	return out
}

// TestAuthorFlags changes an author's flags step by step (a suspension
// and a lock, each on and off, overlapping) and checks what a follower
// and a stranger see of the author's post and of a plain repost of it
// after each step. Each step is read twice: by a store whose post cache
// is cold, and by one that read the posts before (the cache then names
// the authors, and the flags join the first round trip).
func TestAuthorFlags(t *testing.T) {
	s, rdb := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	author, follower, stranger := u[0], u[1], u[2]
	feedOK(t, s.Follow(ctx, follower, author))
	post := feedPost(t, s, author, social.NewPost{Content: "mine"}).ID
	plain, err := s.CreatePost(ctx, follower, social.NewPost{RepostOf: post})
	feedOK(t, err)
	repost := plain.ID
	warm := redisstore.New(rdb, s.Keys().Prefix())
	visibleIDs(t, warm, stranger, post, repost)

	steps := []struct {
		name          string
		do            func() error
		toFollower    []string
		toStranger    []string
		authorLetters string
	}{
		{"none", func() error { return nil }, []string{post, repost}, []string{post, repost}, ""},
		{"suspended", func() error { return s.SetSuspended(ctx, author, true) }, nil, nil, "s"},
		{"suspended and locked", func() error { lockAccount(t, s, author, true); return nil }, nil, nil, "sl"},
		// A lock hides the post; the plain repost made before it stays
		// its reposter's, and its original reads as hidden.
		{"locked", func() error { return s.SetSuspended(ctx, author, false) }, []string{post, repost}, []string{repost}, "l"},
		{"unlocked", func() error { lockAccount(t, s, author, false); return nil }, []string{post, repost}, []string{post, repost}, ""},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		for _, store := range []*redisstore.Store{redisstore.New(rdb, s.Keys().Prefix()), warm} {
			if got := visibleIDs(t, store, follower, post, repost); !slices.Equal(got, st.toFollower) {
				t.Errorf("%s: the follower sees %v, want %v", st.name, got, st.toFollower)
			}
			if got := visibleIDs(t, store, stranger, post, repost); !slices.Equal(got, st.toStranger) {
				t.Errorf("%s: the stranger sees %v, want %v", st.name, got, st.toStranger)
			}
		}
		letters, _ := rdb.HGet(ctx, s.Keys().AuthorFlags(), author).Result()
		if letters != st.authorLetters {
			t.Errorf("%s: flags %q, want %q", st.name, letters, st.authorLetters)
		}
	}
	if n, _ := rdb.HLen(ctx, s.Keys().AuthorFlags()).Result(); n != 0 {
		t.Errorf("AuthorFlags keeps %d fields with no flag left", n)
	}
}

// TestAuthorFlagsReadFollowsBatch checks that what a visibility check
// reads about its authors follows its batch, not how many accounts are
// flagged: a home page holding a plain repost, read by a store whose post
// cache is cold, with 3 000 suspended and 3 000 locked accounts elsewhere
// (#hidden counting them, so the repost's original author is read too),
// gets at most one reply element a post more than with none.
func TestAuthorFlagsReadFollowsBatch(t *testing.T) {
	s, rdb := feedStore(t)
	ctx := context.Background()
	w := feedWorker(t, s, rdb)
	u := feedUsers(t, s, 4)
	reader, reposter := u[0], u[3]
	for _, a := range u[1:3] {
		feedOK(t, s.Follow(ctx, reader, a))
		for range 5 {
			feedPost(t, s, a, social.NewPost{})
		}
	}
	feedOK(t, s.Follow(ctx, reader, reposter))
	other := feedPost(t, s, u[1], social.NewPost{}).ID
	_, err := s.CreatePost(ctx, reposter, social.NewPost{RepostOf: other})
	feedOK(t, err)
	drain(t, w)
	items := &cmdCounter{}
	counted := redistest.Client(t)
	counted.AddHook(items)
	const first = 10
	page := func() int {
		t.Helper()
		store := redisstore.New(counted, s.Keys().Prefix())
		items.take()
		pg, err := store.HomePage(ctx, reader, social.PageRequest{First: first}, readplan.PageWants{Authors: true, Reposts: true})
		if err != nil || len(pg.Posts.Items) != first {
			t.Fatalf("home page: %v", err)
		}
		return items.take().items
	}
	before := page()
	flags := map[string]any{redisstore.HiddenCount: "3000"}
	for i := range 6000 {
		flags[strconv.Itoa(1_000_000+i)] = map[bool]string{true: "s", false: "l"}[i%2 == 0]
	}
	feedOK(t, rdb.HSet(ctx, s.Keys().AuthorFlags(), flags).Err())
	after := page()
	t.Logf("reply elements: %d with none flagged, %d with 6 000", before, after)
	if after > before+first {
		t.Errorf("a home page reads %d reply elements with 6 000 flagged accounts, %d with none", after, before)
	}
}

// TestMigrateAuthorFlags moves the sets an earlier version kept into
// AuthorFlags: what they said holds after, nothing is left in them, and a
// second run moves nothing.
func TestMigrateAuthorFlags(t *testing.T) {
	s, rdb := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 4)
	author, deleting, stranger, older := u[0], u[1], u[2], u[3]
	post := feedPost(t, s, author, social.NewPost{}).ID
	locked, suspended := s.Keys().LegacyFlagSets()
	feedOK(t, rdb.SAdd(ctx, locked, author, older).Err())
	// A profile still under its earlier name is an account all the same.
	feedOK(t, rdb.Rename(ctx, s.Keys().User(older), s.Keys().LegacyUser(older)).Err())
	feedOK(t, rdb.SAdd(ctx, suspended, author, "999999").Err())
	feedOK(t, rdb.SAdd(ctx, s.Keys().Deleting(), deleting).Err())

	n, err := s.MigrateAuthorFlags(ctx)
	if err != nil || n != 3 {
		t.Fatalf("moved %d, %v; want 3 (999999 is no account)", n, err)
	}
	got, err := rdb.HGetAll(ctx, s.Keys().AuthorFlags()).Result()
	feedOK(t, err)
	want := map[string]string{author: "ls", older: "l", deleting: "d", "#hidden": "2"}
	if !maps.Equal(got, want) {
		t.Errorf("flags %v, want %v", got, want)
	}
	for _, k := range []string{locked, suspended} {
		if n, _ := rdb.Exists(ctx, k).Result(); n != 0 {
			t.Errorf("%s is left", k)
		}
	}
	if m, _ := rdb.SMembers(ctx, s.Keys().Deleting()).Result(); !slices.Equal(m, []string{deleting}) {
		t.Errorf("the purges' work list is %v, want [%s]", m, deleting)
	}
	if got := visibleIDs(t, s, stranger, post); got != nil {
		t.Errorf("a suspended author's post is seen after the move: %v", got)
	}
	if n, err := s.MigrateAuthorFlags(ctx); err != nil || n != 0 {
		t.Errorf("a second run moved %d, %v", n, err)
	}
	if again, _ := rdb.HGetAll(ctx, s.Keys().AuthorFlags()).Result(); !maps.Equal(again, want) {
		t.Errorf("a second run changed the flags: %v", again)
	}
}

// TestPurgeCutShortClearsFlags: a purge that stopped after it deleted the
// account's record and before it cleared its flags (the last two steps)
// is finished by its job, which finds no account: no flag of the account
// is left, and #hidden counts nothing.
func TestPurgeCutShortClearsFlags(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 1)[0]
	lockAccount(t, s, u, true)
	feedOK(t, s.DeleteAccount(ctx, u))
	if f, _ := rdb.HGet(ctx, s.Keys().AuthorFlags(), u).Result(); f != "ld" {
		t.Fatalf("flags while the purge runs: %q, want \"ld\"", f)
	}
	// The cut: the record is gone, the flags and the work list are not.
	feedOK(t, rdb.Unlink(ctx, s.Keys().Gone(u)).Err())
	drain(t, w)
	if n, _ := rdb.Exists(ctx, s.Keys().AuthorFlags(), s.Keys().Deleting()).Result(); n != 0 {
		all, _ := rdb.HGetAll(ctx, s.Keys().AuthorFlags()).Result()
		t.Errorf("left after the purge: flags %v, and the work list (%d keys in all)", all, n)
	}
}
