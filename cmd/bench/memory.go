package main

import (
	"context"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// EntryBytes is the memory of home lists.
type EntryBytes struct {
	Lists, Capped int // home lists, and those at the cap
	// AtCap is MEMORY USAGE per entry of the capped lists (mean, min, max
	// over up to 200 of them).
	AtCap, AtCapMin, AtCapMax float64
	// Filled is set when no list was at the cap and one was filled by
	// following the most active authors.
	Filled bool
	// All is MEMORY USAGE per entry over every home list.
	All                 float64
	Entries             int64
	Encoding            string // of a capped list
	ListMaxListpackSize string
}

// measureEntryBytes reads MEMORY USAGE of the main data set's home lists.
func (b *Bench) measureEntryBytes(ctx context.Context) (*EntryBytes, error) {
	k := b.store.Keys()
	limit := b.store.Feed().HomeCap
	homes := make([]string, len(b.data.UserIDs))
	for i, id := range b.data.UserIDs {
		homes[i] = k.Home(id)
	}
	lens, err := b.lengths(ctx, homes)
	if err != nil {
		return nil, err
	}
	out := &EntryBytes{}
	var capped []string
	for i, n := range lens {
		if n > 0 {
			out.Lists++
			out.Entries += n
		}
		if n >= int64(limit) {
			capped = append(capped, homes[i])
		}
	}
	out.Capped = len(capped)
	if len(capped) == 0 {
		key, err := b.fillToCap(ctx)
		if err != nil {
			return nil, err
		}
		capped, out.Filled = []string{key}, true
	}
	capped = capped[:min(200, len(capped))]
	usage, err := b.memoryUsage(ctx, capped)
	if err != nil {
		return nil, err
	}
	clen, err := b.lengths(ctx, capped)
	if err != nil {
		return nil, err
	}
	out.AtCapMin = 1e9
	var sum float64
	for i, u := range usage {
		per := float64(u) / float64(clen[i])
		sum += per
		out.AtCapMin, out.AtCapMax = min(out.AtCapMin, per), max(out.AtCapMax, per)
	}
	out.AtCap = sum / float64(len(usage))
	all, err := b.memoryUsage(ctx, homes)
	if err != nil {
		return nil, err
	}
	var total int64
	for _, u := range all {
		total += u
	}
	if out.Entries > 0 {
		out.All = float64(total) / float64(out.Entries)
	}
	out.Encoding = b.rdb.ObjectEncoding(ctx, capped[0]).Val()
	if v, err := b.rdb.ConfigGet(ctx, "list-max-listpack-size").Result(); err == nil {
		out.ListMaxListpackSize = v["list-max-listpack-size"]
	}
	b.logf("bench: home lists: %d, %d at the cap; %.1f bytes per entry at the cap, %.1f over all", out.Lists, out.Capped, out.AtCap, out.All)
	return out, nil
}

// fillToCap fills one home list to the cap when the data set has none (a
// small one): a new user follows the most active authors until it is
// full, through Follow, whose backfill copies their recent posts.
func (b *Bench) fillToCap(ctx context.Context) (string, error) {
	k := b.store.Keys()
	id, err := b.store.UserIDByName(ctx, "capfill")
	if social.IsCode(err, social.NotFound) {
		u, cerr := b.authn.Register(ctx, "capfill", "capfill@example.com", "capfill password")
		if cerr != nil {
			return "", cerr
		}
		id, err = u.User.ID, nil
	}
	if err != nil {
		return "", err
	}
	keys := make([]string, len(b.data.UserIDs))
	for i, u := range b.data.UserIDs {
		keys[i] = k.UserPosts(u)
	}
	n, err := pipelineInts(ctx, b.rdb, keys, func(p redis.Pipeliner, key string) *redis.IntCmd { return p.ZCard(ctx, key) })
	if err != nil {
		return "", err
	}
	order := make([]int, len(n))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, c int) int { return int(n[c] - n[a]) })
	limit := int64(b.store.Feed().HomeCap)
	for _, u := range order {
		if l := b.rdb.LLen(ctx, k.Home(id)).Val(); l >= limit {
			break
		}
		if err := b.store.Follow(ctx, id, b.data.UserIDs[u]); err != nil {
			return "", err
		}
	}
	return k.Home(id), nil
}

// lengths returns LLEN of each list (0 for a missing one).
func (b *Bench) lengths(ctx context.Context, keys []string) ([]int64, error) {
	return pipelineInts(ctx, b.rdb, keys, func(p redis.Pipeliner, key string) *redis.IntCmd { return p.LLen(ctx, key) })
}

// memoryUsage returns MEMORY USAGE key SAMPLES 0 of each key (0 for a
// missing one): every element counted, not a sample.
func (b *Bench) memoryUsage(ctx context.Context, keys []string) ([]int64, error) {
	return pipelineInts(ctx, b.rdb, keys, func(p redis.Pipeliner, key string) *redis.IntCmd { return p.MemoryUsage(ctx, key, 0) })
}

// pipelineInts runs one integer command per key, 1 000 per pipeline; a
// missing key reads 0.
func pipelineInts(ctx context.Context, rdb redis.UniversalClient, keys []string, cmd func(redis.Pipeliner, string) *redis.IntCmd) ([]int64, error) {
	out := make([]int64, len(keys))
	for start := 0; start < len(keys); start += rawBatchSize {
		part := keys[start:min(start+rawBatchSize, len(keys))]
		cmds := make([]*redis.IntCmd, len(part))
		_, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, key := range part {
				cmds[i] = cmd(p, key)
			}
			return nil
		})
		if err != nil && err != redis.Nil {
			return nil, err
		}
		for i, c := range cmds {
			if err := c.Err(); err != nil && err != redis.Nil {
				return nil, err
			}
			out[start+i] = c.Val()
		}
	}
	return out, nil
}

// EntityBytes is the Redis memory of each kind of thing the main data set
// holds: MEMORY USAGE (SAMPLES 0) of every key that stores it, summed and
// divided by how many there are, so each key's own overhead is shared by
// its members. docs/scaling.md sizes deployments from it.
type EntityBytes struct {
	Users, Posts, Follows, Likes, Comments int64
	// Bytes per user (profile hash and its name and e-mail index fields),
	// per post (hash, audience and repost sets, its author-timeline
	// entry), per follow edge (both zset entries), per like (the likers
	// zset entry) and per comment (hash, list entry, index field).
	User, Post, Follow, Like, Comment float64
}

// measureEntityBytes reads MEMORY USAGE of every key of the main data set
// but the home lists (measureEntryBytes).
func (b *Bench) measureEntityBytes(ctx context.Context) (*EntityBytes, error) {
	out := &EntityBytes{Users: int64(len(b.data.UserIDs))}
	if err := b.userAndFollowBytes(ctx, out); err != nil {
		return nil, err
	}
	posts, err := b.postBytes(ctx, out)
	if err != nil {
		return nil, err
	}
	if err := b.likeBytes(ctx, posts, out); err != nil {
		return nil, err
	}
	if err := b.commentBytes(ctx, posts, out); err != nil {
		return nil, err
	}
	b.logf("bench: bytes per user %.0f, post %.0f, follow %.0f, like %.0f, comment %.0f", out.User, out.Post, out.Follow, out.Like, out.Comment)
	return out, nil
}

// userAndFollowBytes measures the users' profiles with the name and e-mail
// indexes, and the follow edges.
func (b *Bench) userAndFollowBytes(ctx context.Context, out *EntityBytes) error {
	k := b.store.Keys()
	users := b.data.UserIDs
	profiles, following, followers := make([]string, len(users)), make([]string, len(users)), make([]string, len(users))
	for i, u := range users {
		profiles[i], following[i], followers[i] = k.User(u), k.Following(u), k.Followers(u)
	}
	userBytes, err := b.totalMemoryUsage(ctx, append(profiles, k.Names(), k.Emails()))
	if err != nil {
		return err
	}
	out.User = perEach(userBytes, out.Users)

	edges, err := pipelineInts(ctx, b.rdb, following, func(p redis.Pipeliner, key string) *redis.IntCmd { return p.ZCard(ctx, key) })
	if err != nil {
		return err
	}
	for _, n := range edges {
		out.Follows += n
	}
	edgeBytes, err := b.totalMemoryUsage(ctx, append(following, followers...))
	if err != nil {
		return err
	}
	out.Follow = perEach(edgeBytes, out.Follows)
	return nil
}

// postBytes measures the posts with their audience and repost sets and
// their authors' timelines, and returns the posts' ids.
func (b *Bench) postBytes(ctx context.Context, out *EntityBytes) ([]string, error) {
	k := b.store.Keys()
	own := make([]string, len(b.data.UserIDs))
	for i, u := range b.data.UserIDs {
		own[i] = k.UserPosts(u)
	}
	owned, err := b.members(ctx, own, func(p redis.Pipeliner, key string) *redis.StringSliceCmd { return p.ZRange(ctx, key, 0, -1) })
	if err != nil {
		return nil, err
	}
	var posts []string
	for _, ids := range owned {
		posts = append(posts, ids...)
	}
	out.Posts = int64(len(posts))
	postKeys := make([]string, 0, 4*len(posts))
	for _, p := range posts {
		postKeys = append(postKeys, k.Post(p), k.PostOnlyTo(p), k.PostNotTo(p), k.PostReposts(p))
	}
	postBytes, err := b.totalMemoryUsage(ctx, append(postKeys, own...))
	if err != nil {
		return nil, err
	}
	out.Post = perEach(postBytes, out.Posts)
	return posts, nil
}

// likeBytes measures the posts' likers sets and viewer flags (which also
// hold the plain reposts' and the audiences' flags, a few a post).
func (b *Bench) likeBytes(ctx context.Context, posts []string, out *EntityBytes) error {
	likers := make([]string, len(posts))
	viewers := make([]string, len(posts))
	for i, p := range posts {
		likers[i] = b.store.Keys().Likers(p)
		viewers[i] = b.store.Keys().PostViewers(p)
	}
	likes, err := pipelineInts(ctx, b.rdb, likers, func(p redis.Pipeliner, key string) *redis.IntCmd { return p.ZCard(ctx, key) })
	if err != nil {
		return err
	}
	for _, n := range likes {
		out.Likes += n
	}
	likeBytes, err := b.totalMemoryUsage(ctx, append(likers, viewers...))
	if err != nil {
		return err
	}
	out.Like = perEach(likeBytes, out.Likes)
	return nil
}

// commentBytes measures the comments: their hashes, the posts' comment
// lists and the comment-to-post index.
func (b *Bench) commentBytes(ctx context.Context, posts []string, out *EntityBytes) error {
	k := b.store.Keys()
	lists := make([]string, len(posts))
	for i, p := range posts {
		lists[i] = k.PostComments(p)
	}
	commentKeys := append([]string{}, lists...)
	buckets := map[string]bool{}
	comments, err := b.members(ctx, lists, func(p redis.Pipeliner, key string) *redis.StringSliceCmd { return p.LRange(ctx, key, 0, -1) })
	if err != nil {
		return err
	}
	for i, ids := range comments {
		for _, c := range ids {
			out.Comments++
			commentKeys = append(commentKeys, k.PostComment(posts[i], c))
			buckets[k.CommentPost(c)] = true
		}
	}
	for key := range buckets {
		commentKeys = append(commentKeys, key)
	}
	commentBytes, err := b.totalMemoryUsage(ctx, commentKeys)
	if err != nil {
		return err
	}
	out.Comment = perEach(commentBytes, out.Comments)
	return nil
}

// totalMemoryUsage is the sum of memoryUsage over keys.
func (b *Bench) totalMemoryUsage(ctx context.Context, keys []string) (int64, error) {
	usage, err := b.memoryUsage(ctx, keys)
	var t int64
	for _, u := range usage {
		t += u
	}
	return t, err
}

// perEach divides bytes among n things (0 when there are none).
func perEach(bytes, n int64) float64 {
	if n == 0 {
		return 0
	}
	return float64(bytes) / float64(n)
}

// members runs one list-valued read per key, rawBatchSize per pipeline
// (a missing key reads as empty).
func (b *Bench) members(ctx context.Context, keys []string, cmd func(redis.Pipeliner, string) *redis.StringSliceCmd) ([][]string, error) {
	out := make([][]string, len(keys))
	for start := 0; start < len(keys); start += rawBatchSize {
		part := keys[start:min(start+rawBatchSize, len(keys))]
		cmds := make([]*redis.StringSliceCmd, len(part))
		_, err := b.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, key := range part {
				cmds[i] = cmd(p, key)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		for i, c := range cmds {
			out[start+i] = c.Val()
		}
	}
	return out, nil
}
