package redisstore_test

import (
	"context"
	"maps"
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
// and checks the backfill builds them again: the same members, each like
// scored as in Likers and each comment by its time, a post with more
// likers and comments than a read brings done in full. The likes of an
// account that is gone are taken back and its comments indexed nowhere.
// A second run adds nothing.
func TestMigrateEngagementIndexes(t *testing.T) {
	defer redisstore.SetEngagementChunk(2)()
	s, rdb := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 5)
	live, gone := u[:4], u[4]
	busy := feedPost(t, s, u[0], social.NewPost{}).ID
	quiet := feedPost(t, s, u[1], social.NewPost{}).ID
	for _, liker := range u[1:] {
		feedOK(t, s.Like(ctx, liker, busy))
	}
	feedOK(t, s.Like(ctx, u[2], quiet))
	var deleted string
	for i, by := range []string{u[1], u[1], u[3], u[2], gone} {
		c, err := s.AddComment(ctx, by, busy, "c")
		feedOK(t, err)
		if i == 1 {
			deleted = c.ID
		}
	}
	_, err := s.AddComment(ctx, u[3], quiet, "q")
	feedOK(t, err)
	feedOK(t, s.DeleteComment(ctx, u[1], deleted))
	want := engagementIndexes(t, s, rdb, live)
	if len(want[s.Keys().UserLikes(u[2])]) != 2 || len(want[s.Keys().UserComments(u[3])]) != 2 {
		t.Fatalf("the writers did not index: %v", want)
	}
	// A like's score is its time in Likers.
	for _, liker := range live {
		for post := range want[s.Keys().UserLikes(liker)] {
			score, err := rdb.ZScore(ctx, s.Keys().Likers(post), liker).Result()
			feedOK(t, err)
			want[s.Keys().UserLikes(liker)][post] = score
		}
	}

	for _, k := range []string{s.Keys().UserLikes(gone), s.Keys().UserComments(gone), s.Keys().User(gone)} {
		feedOK(t, rdb.Del(ctx, k).Err()) // gone: an account purged before its likes and comments were indexed
	}
	for k := range want {
		feedOK(t, rdb.Del(ctx, k).Err())
	}
	feedOK(t, rdb.HDel(ctx, s.Keys().Layout(), redisstore.LayoutEngagement).Err())
	n, err := s.MigrateEngagementIndexes(ctx)
	if err != nil || n != 4+4+1 {
		t.Fatalf("backfill did %d, %v; want 9 (4 likes and 4 comments indexed, 1 like taken back)", n, err)
	}
	if got := engagementIndexes(t, s, rdb, live); !maps.EqualFunc(got, want, maps.Equal) {
		t.Errorf("indexes %v, want %v", got, want)
	}
	if n, _ := rdb.Exists(ctx, s.Keys().UserLikes(gone), s.Keys().UserComments(gone)).Result(); n != 0 {
		t.Errorf("the backfill indexed %d keys of an account that is gone", n)
	}
	if _, err := rdb.ZScore(ctx, s.Keys().Likers(busy), gone).Result(); err == nil {
		t.Errorf("the like of an account that is gone stays")
	}
	if posts, c, err := s.CheckedPost(ctx, "", busy); err != nil || posts == nil || c.Likes != 3 {
		t.Errorf("busy's likes count %d, want 3 (%v)", c.Likes, err)
	}
	if n, err := s.MigrateEngagementIndexes(ctx); err != nil || n != 0 {
		t.Errorf("a second run did %d, %v", n, err)
	}
}
