package redisstore_test

import (
	"context"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// noteGroup names a notification across its raises: its id changes each
// time a new actor raises it, its kind and subject do not.
func noteGroup(n *social.Notification) string {
	return string(n.Kind) + " " + n.PostID + " " + n.CommentID
}

// noteIDs is every notification of u as group → id.
func noteIDs(t *testing.T, s *redisstore.Store, u string) map[string]int64 {
	t.Helper()
	page, err := s.Notifications(context.Background(), u, social.PageRequest{First: 100}, 1)
	feedOK(t, err)
	out := map[string]int64{}
	for _, n := range page.Items {
		id, _ := strconv.ParseInt(n.ID, 10, 64)
		out[noteGroup(n)] = id
	}
	return out
}

// TestNotificationsPagingUnderAggregation walks the notifications a few
// at a time, again and again, while other users like, unlike and follow,
// so that notifications are raised, made and dropped between pages. The
// rules: a page holds the notifications below its cursor, most recently
// raised first; a notification raised during a walk moves above the
// cursor and is not read again in it (no duplicate); one not raised or
// dropped during the walk is read in it, with its id (no gap); an edge's
// cursor is its notification's id, and stays valid whatever happens.
func TestNotificationsPagingUnderAggregation(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 61)
	owner, actors := u[0], u[1:]
	var posts []string
	for i := range 30 {
		p := feedPost(t, s, owner, social.NewPost{}).ID
		posts = append(posts, p)
		feedOK(t, s.Like(ctx, actors[i], p))
	}
	drain(t, w)

	stop := make(chan struct{})
	var churn sync.WaitGroup
	var churnErr atomic.Value
	churn.Go(func() {
		rng := rand.New(rand.NewPCG(1, 2))
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			a, p := actors[rng.IntN(len(actors))], posts[rng.IntN(len(posts))]
			var err error
			switch i % 5 {
			case 0, 1, 2:
				err = s.Like(ctx, a, p)
			case 3:
				err = s.Unlike(ctx, a, p)
			case 4:
				err = s.Follow(ctx, a, owner)
			}
			if err == nil {
				_, err = w.Drain(ctx)
			}
			if err != nil {
				churnErr.Store(err)
				return
			}
		}
	})

	raisedDuring := 0
	for walk := range 25 {
		before := noteIDs(t, s, owner)
		seen := map[string]int64{}
		last := int64(1 << 62)
		after := ""
		for {
			page, err := s.Notifications(ctx, owner, social.PageRequest{First: 4, After: after}, 1)
			feedOK(t, err)
			for i, n := range page.Items {
				id, _ := strconv.ParseInt(n.ID, 10, 64)
				if id >= last {
					t.Fatalf("walk %d: id %d after %d: not below the cursor", walk, id, last)
				}
				last = id
				if page.Cursors[i] != social.EncodeCursor(n.ID) {
					t.Fatalf("walk %d: cursor %q of %s is not its id", walk, page.Cursors[i], n.ID)
				}
				if prev, ok := seen[noteGroup(n)]; ok {
					t.Fatalf("walk %d: %s read twice (ids %d and %d)", walk, noteGroup(n), prev, id)
				}
				seen[noteGroup(n)] = id
			}
			if !page.HasNext {
				break
			}
			after = page.Cursors[len(page.Cursors)-1]
		}
		now := noteIDs(t, s, owner)
		for g, id := range before {
			if now[g] != id {
				raisedDuring++ // raised, dropped or made again: either way not owed
				continue
			}
			if seen[g] != id {
				t.Fatalf("walk %d: %s (id %d, not raised during the walk) read as %d", walk, g, id, seen[g])
			}
		}
	}
	close(stop)
	churn.Wait()
	if err, _ := churnErr.Load().(error); err != nil {
		t.Fatal(err)
	}
	if raisedDuring == 0 {
		t.Fatal("no notification was raised during a walk: the test ran nothing concurrently")
	}
	t.Logf("%d notifications raised or dropped during the 25 walks", raisedDuring)
}
