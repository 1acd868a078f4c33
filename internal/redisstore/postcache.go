package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/rcache"
)

// The post cache: the fields of a post's hash that never change once
// post.lua wrote them (postFields: author, content, created, vis, the
// repost link, source, place, mentions, media), kept in the process by
// the hash's key. No invalidation is needed: nothing writes those fields
// after the post is created (the later writes of the hash are its
// counters, lua/lib/counts.lua; cm, lua/lib/packed.lua; pv,
// post_migrate.lua; and DEL on delete), and ids come from INCR, so a key
// never names another post. A visibility check that holds a post's fields
// reads only postLiveFields: author and created, which prove the hash
// still exists and is the same post (a deleted post's hash is gone; one
// written again after a flush or a restore has another created or
// author, and is read in full), the counters, cm and pv. What decides
// visibility beyond the post's own fields (the viewer's flags, blocks) is
// read as before.

// DefaultPostCache is the number of posts a gateway keeps by default.
const DefaultPostCache = 100_000

// postLiveFields are read of a post whose fixed fields are cached.
var postLiveFields = append(append(fieldArgs(postAuthorField, "created"), postCounterFields...), postLayoutFields...)

// postCreatedIndex is where postFields puts created.
const postCreatedIndex = 2

// CachePosts keeps the fixed fields of at most size posts in the process
// (0: none). It is meant to be called once, before the store serves.
func (s *DB) CachePosts(size int) {
	if size > 0 {
		s.posts = rcache.NewFixed[[]any](size)
	}
}

// PostCacheStats returns the post cache's counters (zero when off).
func (s *DB) PostCacheStats() rcache.Stats { return s.posts.Stats() }

// queuePostRead queues the read of one post's hash: postLiveFields when
// the cache holds its fixed fields (returned), else postReadFields.
func (s *DB) queuePostRead(ctx context.Context, p redis.Pipeliner, id string) (*redis.SliceCmd, []any) {
	key := s.keys.Post(id)
	if fixed, ok := s.posts.Get(key); ok {
		return hmget(ctx, p, key, postLiveFields), fixed
	}
	return hmget(ctx, p, key, postReadFields), nil
}

// postValues returns the i-th post's hash as postReadFields, from its
// reply and its cached fixed fields; false when the cached fields are of
// another post than the hash now holds (the cached entry is dropped and
// the caller reads the hash in full). A full read of an existing post
// fills the cache.
func (s *DB) postValues(id string, cmd *redis.SliceCmd, fixed []any) ([]any, bool) {
	got := cmd.Val()
	key := s.keys.Post(id)
	if fixed == nil {
		if a, _ := got[0].(string); a != "" && cmd.Err() == nil {
			s.posts.Add(key, append([]any(nil), got[:len(postFields)]...))
		}
		return got, true
	}
	vals := make([]any, len(postReadFields))
	author, _ := got[0].(string)
	if author == "" {
		return vals, true // gone: no author, the post does not exist
	}
	if author != fixed[0] || got[1] != fixed[postCreatedIndex] {
		s.posts.Invalidate(key)
		return nil, false
	}
	copy(vals, fixed)
	copy(vals[postCountersIndex:], got[2:])
	return vals, true
}

// postRows turns a visibility check's replies into its rows, reading in
// full (one more round trip) the posts whose cached fields turned out to
// be of another post.
func (v *visibility) postRows(ctx context.Context) error {
	v.rows = make([][]any, len(v.ids))
	var again []int
	for i, cmd := range v.hash {
		if cmd == nil {
			continue
		}
		var ok bool
		if v.rows[i], ok = v.db.postValues(v.ids[i], cmd, v.fixed[i]); !ok {
			again = append(again, i)
		}
	}
	if len(again) == 0 {
		return nil
	}
	cmds, err := v.db.pipelined(ctx, func(p redis.Pipeliner) error {
		for _, i := range again {
			v.hash[i], v.fixed[i] = hmget(ctx, p, v.db.keys.Post(v.ids[i]), postReadFields), nil
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("load %d posts: %w", len(again), err)
	}
	for _, i := range again {
		v.rows[i], _ = v.db.postValues(v.ids[i], v.hash[i], nil)
	}
	return nil
}
