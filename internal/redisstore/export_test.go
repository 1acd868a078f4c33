package redisstore

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// LuaSource exposes the embedded scripts to the script tests.
var LuaSource = luaSource

// ScriptSources are the full sources of the store's scripts by file name.
var ScriptSources = scriptSources

// SetClock replaces the store's clock.
func (s *DB) SetClock(now func() time.Time) { s.now = now }

// DeliverAsOneBatch delivers post (by author, in push mode, no audience)
// to recipients in one deliver_batch.lua call, whatever servers hold them:
// on Redis Cluster a batch that straddles masters, as a stale slot map
// would send, which delivery must recover from.
func (s *DB) DeliverAsOneBatch(ctx context.Context, post, author string, recipients []string) error {
	d := delivery{s: s, post: post, author: author, mustFollow: "0"}
	return d.sendBatches(ctx, [][]string{recipients})
}

// EachFollowers exposes the walk of a user's followers that fan-out makes.
func (s *DB) EachFollowers(ctx context.Context, author string, fn func([]string) error) error {
	return s.eachFollowers(ctx, author, false, fn)
}

// Bounds of a common-following page, for the tests that check them.
const (
	CommonChunk   = commonChunk
	CommonWalkMax = commonWalkMax
	CommonSample  = commonSample
)

// PostView is one post as a page's post view reads it (post_view.go).
type PostView struct {
	Post     *social.Post
	Facts    social.AccessFacts
	Counts   social.PostCounts
	Marks    social.Marks
	Comments social.Connection[*social.Comment]
}

// PostViews reads the views of ids for viewer with counters, marks and
// first comments, in one pipeline.
func (s *DB) PostViews(ctx context.Context, viewer string, ids []string, first int) ([]PostView, error) {
	views := make([]postView, len(ids))
	_, err := s.pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			views[i] = s.queuePostView(ctx, p, viewer, id, viewWants{counts: true, marks: true, comments: first + 1})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]PostView, len(ids))
	for i, v := range views {
		out[i] = PostView{Post: v.post(ids[i]), Facts: v.accessFacts(false), Counts: v.counts(), Marks: v.marks(), Comments: v.comments(ids[i], first)}
	}
	return out, nil
}
