package redisstore_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// counterFields are the post hash's counters (postRecord, records.go).
var counterFields = []string{"nlikes", "ncomments", "nreposts"}

// countersFixture is an engagement fixture whose public post went
// through every writer of a counter, the undoing ones too: 2 likes, 1
// comment, 1 repost stand.
func countersFixture(t *testing.T) *countersFix {
	t.Helper()
	ctx := context.Background()
	f := &countersFix{engagementFixture: newEngagementFixture(t)}
	s := f.s
	for _, u := range []string{f.fan, f.other, f.author} {
		feedOK(t, s.Like(ctx, u, f.public))
	}
	feedOK(t, s.Unlike(ctx, f.author, f.public))
	for _, c := range []string{"dropped", "kept"} { // each writer last once
		cm, err := s.AddComment(ctx, f.other, f.public, c)
		if err != nil {
			t.Fatal(err)
		}
		if c == "dropped" {
			feedOK(t, s.DeleteComment(ctx, f.other, cm.ID))
		}
	}
	undone := engPost(t, s, f.other, social.NewPost{RepostOf: f.public, Content: "mine"})
	feedOK(t, s.DeletePost(ctx, f.other, undone))
	f.repost = engPost(t, s, f.fan, social.NewPost{RepostOf: f.public})
	return f
}

type countersFix struct {
	*engagementFixture
	repost string // the fan's plain repost of public
}

// sizes are the true counts: the sizes of what the counters count.
func sizes(t *testing.T, f *countersFix, id string) social.PostCounts {
	t.Helper()
	ctx, k := context.Background(), f.s.Keys()
	return social.PostCounts{
		Likes:    int(f.rdb.ZCard(ctx, k.Likers(id)).Val()),
		Comments: int(f.rdb.LLen(ctx, k.PostComments(id)).Val()),
		Reposts:  int(f.rdb.SCard(ctx, k.PostReposts(id)).Val()),
	}
}

// pageCounts reads the author's timeline as the fan with counters, as a
// page fetch does (the counters from the hashes of the visibility check).
func pageCounts(t *testing.T, f *countersFix) map[string]social.PostCounts {
	t.Helper()
	page, err := f.s.UserPage(context.Background(), f.fan, f.author, social.PageRequest{First: 10}, readplan.PageWants{Counts: true})
	if err != nil {
		t.Fatal(err)
	}
	return page.Counts
}

// TestPostCounters: after every writer, the counters the post hash holds,
// PostCounts and a page's counters all equal the sizes they count.
func TestPostCounters(t *testing.T) {
	ctx := context.Background()
	f := countersFixture(t)
	want := social.PostCounts{Likes: 2, Comments: 1, Reposts: 1}
	if got := sizes(t, f, f.public); got != want {
		t.Fatalf("fixture: sizes %+v, want %+v", got, want)
	}
	stored, err := f.rdb.HMGet(ctx, f.s.Keys().Post(f.public), counterFields...).Result()
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(stored, []any{"2", "1", "1"}) {
		t.Errorf("counters stored: %v, want 2 1 1", stored)
	}
	counts, err := f.s.PostCounts(ctx, []string{f.public})
	if err != nil {
		t.Fatal(err)
	}
	if counts[0] != want {
		t.Errorf("PostCounts: %+v, want %+v", counts[0], want)
	}
	if got := pageCounts(t, f)[f.public]; got != want {
		t.Errorf("page counts: %+v, want %+v", got, want)
	}

	// The undoing writers last: the comment and the repost go.
	comments, err := f.s.PostCommentsPage(ctx, f.public, social.PageRequest{First: 5})
	if err != nil || len(comments.Items) != 1 {
		t.Fatalf("comments: %+v, %v", comments, err)
	}
	feedOK(t, f.s.DeleteComment(ctx, f.other, comments.Items[0].ID))
	feedOK(t, f.s.DeletePost(ctx, f.fan, f.repost))
	want = social.PostCounts{Likes: 2}
	if got := pageCounts(t, f)[f.public]; got != want || sizes(t, f, f.public) != want {
		t.Errorf("after the undoing writers: page counts %+v, sizes %+v, want %+v", got, sizes(t, f, f.public), want)
	}
}

// TestPostCountersMigrate: a post whose hash has no counters (written
// before the hash held them) is read with the right counts by a page and
// by PostCounts, and the read writes them; a deleted post's hash is not
// brought back.
func TestPostCountersMigrate(t *testing.T) {
	ctx := context.Background()
	f := countersFixture(t)
	k := f.s.Keys()
	gone := engPost(t, f.s, f.author, social.NewPost{Content: "gone"})
	feedOK(t, f.s.DeletePost(ctx, f.author, gone))
	want := social.PostCounts{Likes: 2, Comments: 1, Reposts: 1}
	for _, read := range []struct {
		name  string
		count func() social.PostCounts
	}{
		{"page", func() social.PostCounts { return pageCounts(t, f)[f.public] }},
		{"PostCounts", func() social.PostCounts {
			c, err := f.s.PostCounts(ctx, []string{f.public, gone})
			if err != nil {
				t.Fatal(err)
			}
			if c[1] != (social.PostCounts{}) {
				t.Errorf("deleted post's counts: %+v", c[1])
			}
			return c[0]
		}},
	} {
		if err := f.rdb.HDel(ctx, k.Post(f.public), counterFields...).Err(); err != nil {
			t.Fatal(err)
		}
		for i := range 2 { // the migrating read, then one of the written counters
			if got := read.count(); got != want {
				t.Errorf("%s, read %d: %+v, want %+v", read.name, i, got, want)
			}
		}
		stored, err := f.rdb.HMGet(ctx, k.Post(f.public), counterFields...).Result()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(stored, []any{"2", "1", "1"}) {
			t.Errorf("%s: counters written: %v, want 2 1 1", read.name, stored)
		}
		if n := f.rdb.Exists(ctx, k.Post(gone)).Val(); n != 0 {
			t.Errorf("%s: the deleted post's hash is back", read.name)
		}
	}
}
