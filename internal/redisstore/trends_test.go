package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/social"
)

// TestTrends: the ranking counts distinct users of a tag's PUBLIC posts
// in the window, one user's thousand posts as one account, and answers
// only what the last refresh counted.
func TestTrends(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	now := time.Date(2030, 5, 1, 12, 30, 0, 0, time.UTC)
	s.SetClock(func() time.Time { return now })
	u := feedUsers(t, s, 4)
	a, b, c, d := u[0], u[1], u[2], u[3]
	for i := range 1000 {
		feedPost(t, s, a, social.NewPost{Content: fmt.Sprintf("again %d #Go", i)})
	}
	feedPost(t, s, b, social.NewPost{Content: "#rust and #go"})
	feedPost(t, s, c, social.NewPost{Content: "#rust"})
	// Posts not everyone may see count for nothing.
	feedPost(t, s, b, social.NewPost{Content: "#secret", OnlyTo: []string{c}})
	feedPost(t, s, c, social.NewPost{Content: "#secret", NotTo: []string{d}})
	gone := feedPost(t, s, d, social.NewPost{Content: "#rust, deleted"})
	drain(t, w)

	refresh := func() {
		t.Helper()
		feedOK(t, rdb.Del(ctx, s.Keys().TrendLock()).Err()) // the lock outlives a test's steps
		if ok, err := s.RefreshTrends(ctx); err != nil || !ok {
			t.Fatalf("RefreshTrends = %v, %v", ok, err)
		}
	}
	trends := func(first int) []social.TagTrend {
		t.Helper()
		got, err := s.TrendingTags(ctx, first)
		feedOK(t, err)
		return got
	}
	steps := []struct {
		name string
		do   func()
		want []social.TagTrend
	}{
		{"before any refresh", func() {}, []social.TagTrend{}},
		{"refreshed", refresh, []social.TagTrend{{Tag: "rust", Uses: 3, Accounts: 3}, {Tag: "go", Uses: 1001, Accounts: 2}}},
		{"a deletion lowers the uses", func() {
			feedOK(t, s.DeletePost(ctx, d, gone.ID))
			drain(t, w)
			refresh()
		}, []social.TagTrend{{Tag: "rust", Uses: 2, Accounts: 3}, {Tag: "go", Uses: 1001, Accounts: 2}}},
		{"23 hours on", func() { now = now.Add(23 * time.Hour); refresh() },
			[]social.TagTrend{{Tag: "rust", Uses: 2, Accounts: 3}, {Tag: "go", Uses: 1001, Accounts: 2}}},
		{"out of the window", func() { now = now.Add(2 * time.Hour); refresh() }, []social.TagTrend{}},
	}
	for _, st := range steps {
		st.do()
		if got := trends(10); !slices.Equal(got, st.want) {
			t.Fatalf("%s: trends = %+v, want %+v", st.name, got, st.want)
		}
	}
	if _, err := s.TrendingTags(ctx, 0); social.ErrorCode(err) != social.BadUserInput {
		t.Errorf("TrendingTags(0) = %v, want BAD_USER_INPUT", err)
	}
	// The refresh forgot the tags of the past window.
	if n := rdb.ZCard(ctx, s.Keys().TrendTags()).Val(); n != 0 {
		t.Errorf("%d tags left in the window index", n)
	}
}

// TestTrendRefreshIsExclusive: of two refreshes at once, one counts.
func TestTrendRefreshIsExclusive(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	first, err := s.RefreshTrends(ctx)
	feedOK(t, err)
	second, err := s.RefreshTrends(ctx)
	feedOK(t, err)
	if !first || second {
		t.Errorf("refreshes = %v, %v; want true, false", first, second)
	}
}
