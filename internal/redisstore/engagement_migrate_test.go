package redisstore_test

import (
	"context"
	"maps"
	"math"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// engagementIndexes reads users' indexes of likes and comments: key →
// member → score.
func engagementIndexes(tb testing.TB, s *redisstore.Store, rdb redis.UniversalClient, users []string) map[string]map[string]float64 {
	tb.Helper()
	out := map[string]map[string]float64{}
	for _, u := range users {
		for _, k := range []string{s.Keys().UserLikes(u), s.Keys().UserComments(u)} {
			zs, err := rdb.ZRangeWithScores(context.Background(), k, 0, -1).Result()
			feedOK(tb, err)
			m := map[string]float64{}
			for _, z := range zs {
				m[z.Member.(string)] = z.Score
			}
			out[k] = m
		}
	}
	return out
}

// TestMigrateEngagementIndexes writes likes and comments, drops the
// users' indexes of them as a database of an earlier version lacks them,
// and checks the backfill builds them again: the same members, likes
// scored as in Likers and comments by their time, a deleted comment left
// out, a post with more likers and comments than a read brings done in
// full; a second run reads nothing.
func TestMigrateEngagementIndexes(t *testing.T) {
	defer redisstore.SetEngagementChunk(2)()
	s, rdb := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 4)
	busy := feedPost(t, s, u[0], social.NewPost{}).ID
	quiet := feedPost(t, s, u[1], social.NewPost{}).ID
	for _, liker := range u[1:] {
		feedOK(t, s.Like(ctx, liker, busy))
	}
	feedOK(t, s.Like(ctx, u[2], quiet))
	var gone string
	for i, by := range []string{u[1], u[1], u[3], u[2]} {
		c, err := s.AddComment(ctx, by, busy, "c")
		feedOK(t, err)
		if i == 1 {
			gone = c.ID
		}
	}
	_, err := s.AddComment(ctx, u[3], quiet, "q")
	feedOK(t, err)
	feedOK(t, s.DeleteComment(ctx, u[1], gone))
	want := engagementIndexes(t, s, rdb, u)
	if len(want[s.Keys().UserLikes(u[2])]) != 2 || len(want[s.Keys().UserComments(u[3])]) != 2 {
		t.Fatalf("the writers did not index: %v", want)
	}

	for k := range want {
		feedOK(t, rdb.Del(ctx, k).Err())
	}
	feedOK(t, rdb.HDel(ctx, s.Keys().Layout(), redisstore.LayoutEngagement).Err())
	n, err := s.MigrateEngagementIndexes(ctx)
	if err != nil || n != 4+4 {
		t.Fatalf("backfill went through %d, %v; want 8 (4 likes, 4 comments)", n, err)
	}
	// A like's score is its time in Likers, which the writer takes apart
	// from the index's: they may differ by a moment.
	near := func(a, b float64) bool { return math.Abs(a-b) < 1000 }
	got := engagementIndexes(t, s, rdb, u)
	for k, m := range want {
		if !maps.EqualFunc(got[k], m, near) {
			t.Errorf("%s: %v, want %v", k, got[k], m)
		}
	}
	if n, err := s.MigrateEngagementIndexes(ctx); err != nil || n != 0 {
		t.Errorf("a second run went through %d, %v", n, err)
	}
}
