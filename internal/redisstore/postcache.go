package redisstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/rcache"
)

// The post cache: the fixed fields of a post's hash (postRecord), which
// post.lua writes once, kept in the process by the hash's key. No
// invalidation is needed: nothing writes a fixed field after the post is
// created (the later writes of the hash are its mutable fields: the
// counters, lua/lib/counts.lua; cm, lua/lib/packed.lua; pv,
// post_migrate.lua; and DEL on delete), and ids come from INCR, so a key
// never names another post. A visibility check that holds a post's fixed
// fields reads only postCachePlan's live fields: author and created,
// which prove the hash still exists and is the same post (a deleted
// post's hash is gone; one written again after a flush or a restore has
// another created or author, and is read in full), and every mutable
// field. What decides visibility beyond the post's own fields (the
// viewer's flags, blocks) is read as before.

// DefaultPostCache is the number of posts a gateway keeps by default.
const DefaultPostCache = 100_000

// postCachePlan is what the post cache keeps of a post (postRecord's
// fixed fields) and what a read of a cached post takes from Redis: author
// and created, which prove the hash is still the cached post, and every
// mutable field.
var postCachePlan = newCachePlan(postRecord, "edited", "author", "created")

// cachePlan is what a cache that keeps records for as long as they live
// may keep of a record, derived from its table: its fixed fields only.
// Every mutable field is read from Redis with the identity fields, in
// the same HMGET, so a cached record costs no more round trips than an
// uncached one and shows every change.
type cachePlan struct {
	keep     []int // positions in the record of the fields kept
	identity []int // positions of the fields compared with the hash's
	live     []any // the fields a read of a kept record takes: identity, then the mutable ones
	livePos  []int // their positions in the record
	// version is the position of the record's version field (-1: none),
	// kept with the versioned fields and compared with the hash's.
	version int
}

// newCachePlan derives a record's cachePlan; one that fails checkPlan
// panics at start-up.
func newCachePlan[T any](r *record[T], version string, identity ...string) cachePlan {
	c := cachePlan{version: -1}
	if version != "" {
		c.version = r.at(version)
	}
	for _, n := range identity {
		c.identity = append(c.identity, r.at(n))
		c.live = append(c.live, r.name(n))
		c.livePos = append(c.livePos, r.at(n))
	}
	for i, f := range r.fields {
		if f.change == fixed || f.change == versioned {
			c.keep = append(c.keep, i)
		} else {
			c.live = append(c.live, f.name)
			c.livePos = append(c.livePos, i)
		}
	}
	if err := checkPlan(r, c); err != nil {
		panic("redisstore: " + err.Error())
	}
	return c
}

// checkPlan reports a plan that would keep a mutable field, or miss one:
// every mutable field is read live and none kept, and the identity
// fields are fixed ones.
func checkPlan[T any](r *record[T], c cachePlan) error {
	for _, i := range c.keep {
		switch ch := r.fields[i].change; {
		case ch == versioned && (c.version < 0 || r.fields[c.version].change != mutable || !slices.Contains(c.livePos, c.version)):
			return fmt.Errorf("record %s: the cache keeps versioned field %s without reading a version", r.lua, r.fields[i].name)
		case ch != fixed && ch != versioned:
			return fmt.Errorf("record %s: the cache keeps mutable field %s", r.lua, r.fields[i].name)
		}
	}
	for _, i := range c.identity {
		if r.fields[i].change != fixed {
			return fmt.Errorf("record %s: identity field %s is mutable", r.lua, r.fields[i].name)
		}
	}
	for i, f := range r.fields {
		if f.change == mutable && !slices.Contains(c.livePos, i) {
			return fmt.Errorf("record %s: mutable field %s is not read with a cached record", r.lua, f.name)
		}
		if !slices.Contains(c.keep, i) && !slices.Contains(c.livePos, i) {
			return fmt.Errorf("record %s: field %s is neither kept nor read", r.lua, f.name)
		}
	}
	return nil
}

// keptAt is where the record's field at position i stands among the
// fields kept (-1: not kept).
func (c cachePlan) keptAt(i int) int { return slices.Index(c.keep, i) }

// kept is what the cache keeps of vals, an HMGET of the whole record:
// the fields kept, then the version they belong to.
func (c cachePlan) kept(vals []any) []any {
	out := make([]any, len(c.keep), len(c.keep)+1)
	for j, i := range c.keep {
		out[j] = vals[i]
	}
	if c.version >= 0 {
		out = append(out, vals[c.version])
	}
	return out
}

// merge is the whole record from what the cache kept and got, the reply
// of an HMGET of live; false when the identity fields differ (the hash
// holds another record).
func (c cachePlan) merge(kept, got []any, n int) ([]any, bool) {
	vals := make([]any, n)
	for j, i := range c.keep {
		vals[i] = kept[j]
	}
	for j := range c.identity {
		if got[j] != vals[c.livePos[j]] {
			return nil, false
		}
	}
	for j, i := range c.livePos {
		vals[i] = got[j]
	}
	if c.version >= 0 && kept[len(c.keep)] != vals[c.version] {
		return nil, false // versioned fields of an older version
	}
	return vals, true
}

// CachePosts keeps the fixed fields of at most size posts in the process
// (0: none). It is meant to be called once, before the store serves.
func (s *DB) CachePosts(size int) {
	if size > 0 {
		s.set.posts = rcache.NewFixed[[]any](size)
	}
}

// PostCacheStats returns the post cache's counters (zero when off).
func (s *DB) PostCacheStats() rcache.Stats { return s.set.posts.Stats() }

// queuePostRead queues the read of one post's hash: postCachePlan's live
// fields when the cache holds its fixed fields (returned), else the whole
// hash.
func (r postReader) queuePostRead(ctx context.Context, p redis.Pipeliner, id string) (*redis.SliceCmd, []any) {
	key := r.keys.Post(id)
	if fixed, ok := r.cache.Get(key); ok {
		return hmget(ctx, p, key, postCachePlan.live), fixed
	}
	return hmget(ctx, p, key, postRecord.all), nil
}

// postValues returns the i-th post's hash as postRecord.all, from its
// reply and its cached fields; false when the cached fields are of
// another post than the hash now holds, or of an earlier edit (the cached
// entry is dropped and the caller reads the hash in full). A full read of an existing post
// fills the cache.
func (r postReader) postValues(id string, cmd *redis.SliceCmd, fixed []any) ([]any, bool) {
	got := cmd.Val()
	key := r.keys.Post(id)
	author := postRecord.at("author")
	if fixed == nil {
		if a, _ := got[author].(string); a != "" && cmd.Err() == nil {
			r.cache.Add(key, postCachePlan.kept(got))
		}
		return got, true
	}
	if a, _ := got[0].(string); a == "" {
		return make([]any, len(postRecord.fields)), true // gone: no author, the post does not exist
	}
	vals, ok := postCachePlan.merge(fixed, got, len(postRecord.fields))
	if !ok {
		r.cache.Invalidate(key)
		return nil, false
	}
	return vals, true
}

// postRows turns a visibility check's replies into its rows, reading in
// full (one more round trip) the posts whose cached fields turned out to
// be of another post.
func (v *visibility) postRows(ctx context.Context) error {
	vals := make([][]any, len(v.ids))
	var again []int
	for i, cmd := range v.hash {
		if cmd == nil {
			continue
		}
		var ok bool
		if vals[i], ok = v.r.postValues(v.ids[i], cmd, v.fixed[i]); !ok {
			again = append(again, i)
		}
	}
	if len(again) > 0 {
		cmds, err := pipelined(ctx, v.r.rdb, func(p redis.Pipeliner) error {
			for _, i := range again {
				v.hash[i], v.fixed[i] = hmget(ctx, p, v.r.keys.Post(v.ids[i]), postRecord.all), nil
			}
			return nil
		})
		if err := pipelineErr(cmds, err); err != nil {
			return fmt.Errorf("load %d posts: %w", len(again), err)
		}
		for _, i := range again {
			vals[i], _ = v.r.postValues(v.ids[i], v.hash[i], nil)
		}
	}
	v.rows = make([]*postRow, len(v.ids))
	for i, vs := range vals {
		if vs != nil {
			v.rows[i] = &postRow{}
			postRecord.decode(v.rows[i], vs)
		}
	}
	return nil
}
