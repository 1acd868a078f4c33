package redisstore_test

import (
	"context"
	"slices"
	"testing"

	"github.com/socialgw/gateway/internal/social"
)

// A home list trimmed between a newer page's read rounds raises its floor
// over entries the page has not read yet: the page still gives the posts
// just above its cursor, read from the followees' timelines.
func TestNewerPageTrimmedBetweenRounds(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	reader, author := u[0], u[1]
	feedOK(t, s.Follow(ctx, reader, author))
	post := func(n int) []string {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = feedPost(t, s, author, social.NewPost{}).ID
		}
		return ids
	}
	cursor := post(1)[0]
	gone := post(10)   // deleted: still listed, hidden, so the page reads in rounds
	visible := post(3) // the page's posts
	newer := post(20)
	drain(t, w)
	for _, id := range gone {
		// Their delete jobs are not run: the entries stay in the list.
		feedOK(t, s.DeletePost(ctx, author, id))
	}

	rounds := 0
	s.AfterNewerRound(func() {
		if rounds++; rounds != 1 {
			return
		}
		// As home_trim: the newest entries kept, the floor at the last.
		home, mark := s.Keys().Home(reader), s.Keys().HomeMark(reader)
		feedOK(t, rdb.LTrim(ctx, home, 0, int64(len(newer)-1)).Err())
		feedOK(t, rdb.HSet(ctx, mark, "floor", newer[0]).Err())
	})
	page, err := newerIDs(ctx, s, reader, 3, social.EncodeCursor(cursor))
	feedOK(t, err)
	want := slices.Clone(visible)
	slices.Reverse(want)
	if rounds < 2 || !slices.Equal(page.Items, want) {
		t.Fatalf("page = %v after %d rounds, want %v (newest first)", page.Items, rounds, want)
	}
}
