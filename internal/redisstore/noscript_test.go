package redisstore_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// flushScripts empties the script cache of every server, as a restart
// does.
func flushScripts(t *testing.T, rdb redis.UniversalClient) {
	t.Helper()
	ctx := context.Background()
	if c, ok := rdb.(*redis.ClusterClient); ok {
		feedOK(t, c.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.ScriptFlush(ctx).Err() }))
		return
	}
	feedOK(t, rdb.ScriptFlush(ctx).Err())
}

// queuedJobs is how many jobs the fan-out queue has ever held.
func queuedJobs(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient) int64 {
	t.Helper()
	var n int64
	for i := range redisstore.DefaultFanoutShards {
		l, err := rdb.XLen(context.Background(), s.Keys().FanoutShard(i)).Result()
		feedOK(t, err)
		n += l
	}
	return n
}

// TestNoScriptRerun: after Redis lost its scripts, a pipeline runs again
// only from the first command that failed with NOSCRIPT: a post's fan-out
// job, queued before its scripts, is queued once; a like's note job,
// queued after the like's script, is queued again after it, and the
// notification rises once however the two copies run.
func TestNoScriptRerun(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	owner, fan := u[0], u[1]
	drain(t, w)

	before := queuedJobs(t, s, rdb)
	flushScripts(t, rdb)
	p, err := s.CreatePost(ctx, owner, social.NewPost{Content: "hello"})
	feedOK(t, err)
	if got := queuedJobs(t, s, rdb) - before; got != 1 {
		t.Fatalf("creating a post queued %d jobs, want 1", got)
	}
	if err := rdb.ZScore(ctx, s.Keys().UserPosts(owner), p.ID).Err(); err != nil {
		t.Fatalf("the post is not in its author's posts after the rerun: %v", err)
	}
	drain(t, w)

	newest, err := s.NewestNotification(ctx, owner)
	feedOK(t, err)
	flushScripts(t, rdb)
	feedOK(t, s.Like(ctx, fan, p.ID))
	drain(t, w)
	notes, err := s.Notifications(ctx, owner, social.PageRequest{First: 5}, 3)
	feedOK(t, err)
	if len(notes.Items) != 1 || notes.Items[0].ActorsCount != 1 || len(notes.Items[0].Actors) != 1 || notes.Items[0].Actors[0] != fan {
		t.Fatalf("after a like through a rerun: %+v", notes.Items)
	}
	if got, err := s.NewestNotification(ctx, owner); err != nil || got != newest+1 {
		t.Fatalf("the notification rose to %d (%v), want once, to %d", got, err, newest+1)
	}
}
