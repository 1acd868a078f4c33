package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// TestDeleteAccountAcrossStores: an account deleted through one store
// (gateway) is gone at once through another whose profile and post
// caches held it: its profile when Redis's announcement arrives, its
// posts on the next read.
func TestDeleteAccountAcrossStores(t *testing.T) {
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	a := cachedStore(t, redistest.Client(t), prefix)
	a.CachePosts(100)
	b := redisstore.New(redistest.Client(t), prefix)
	ids := users(t, a, 2)
	post := feedPost(t, a, ids[0], social.NewPost{Content: "cached"})
	cachedRead(t, a, ids[0])
	for range 2 { // the second read is served by the post cache
		if ps, err := a.VisiblePosts(ctx, ids[1], []string{post.ID}); err != nil || ps[0] == nil {
			t.Fatalf("post before the deletion: %v %v", ps, err)
		}
	}
	if err := b.DeleteAccount(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	for _, viewer := range []string{"", ids[1]} {
		if ps, err := a.VisiblePosts(ctx, viewer, []string{post.ID}); err != nil || ps[0] != nil {
			t.Errorf("viewer %q reads the deleted account's post through the other store: %v %v", viewer, ps, err)
		}
	}
	redistest.Eventually(t, 10*time.Second, "the deletion seen by the other store's profile cache", func() bool {
		_, err := a.User(ctx, ids[0])
		return social.IsCode(err, social.NotFound)
	})
}

// TestDeleteAccountSweep: a purge whose job is lost (dead-lettered, or
// gone with its stream) is queued again by the workers' sweep once it
// has shown no progress for ten minutes, and finishes.
func TestDeleteAccountSweep(t *testing.T) {
	ctx := context.Background()
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	a := feedUsers(t, s, 1)[0]
	feedPost(t, s, a, social.NewPost{Content: "soon gone"})
	drain(t, w)
	if err := s.DeleteAccount(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XTrimMaxLen(ctx, s.Keys().FanoutStream(), 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := s.SweepPending(ctx); err != nil || n != 0 {
		t.Fatalf("a fresh purge swept: %d %v", n, err)
	}
	s.SetClock(func() time.Time { return time.Now().Add(11 * time.Minute) })
	if n, err := s.SweepPending(ctx); err != nil || n != 1 {
		t.Fatalf("a stalled purge: %d queued, %v", n, err)
	}
	drain(t, w)
	if ok, err := rdb.SIsMember(ctx, s.Keys().Deleting(), a).Result(); err != nil || ok {
		t.Fatalf("the purge did not finish: %v %v", ok, err)
	}
	if n := len(redistest.Keys(t, rdb, s.Keys().Prefix()+"u:{u"+a+"}*")); n != 0 {
		t.Errorf("%d keys of the account left", n)
	}
}
