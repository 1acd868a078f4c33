package main

import (
	"context"

	"github.com/redis/go-redis/v9"
)

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
	k := b.store.Keys()
	users := b.data.UserIDs
	out := &EntityBytes{Users: int64(len(users))}
	sum := func(keys []string) (int64, error) {
		usage, err := b.memoryUsage(ctx, keys)
		var t int64
		for _, u := range usage {
			t += u
		}
		return t, err
	}
	per := func(bytes, n int64) float64 {
		if n == 0 {
			return 0
		}
		return float64(bytes) / float64(n)
	}

	profiles, own, following, followers := make([]string, len(users)), make([]string, len(users)), make([]string, len(users)), make([]string, len(users))
	for i, u := range users {
		profiles[i], own[i], following[i], followers[i] = k.User(u), k.UserPosts(u), k.Following(u), k.Followers(u)
	}
	userBytes, err := sum(append(profiles, k.Names(), k.Emails()))
	if err != nil {
		return nil, err
	}
	out.User = per(userBytes, out.Users)

	edges, err := pipelineInts(ctx, b.rdb, following, func(p redis.Pipeliner, key string) *redis.IntCmd { return p.ZCard(ctx, key) })
	if err != nil {
		return nil, err
	}
	for _, n := range edges {
		out.Follows += n
	}
	edgeBytes, err := sum(append(following, followers...))
	if err != nil {
		return nil, err
	}
	out.Follow = per(edgeBytes, out.Follows)

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
	likers, lists := make([]string, len(posts)), make([]string, len(posts))
	for i, p := range posts {
		postKeys = append(postKeys, k.Post(p), k.PostOnlyTo(p), k.PostNotTo(p), k.PostReposts(p))
		likers[i], lists[i] = k.Likers(p), k.PostComments(p)
	}
	postBytes, err := sum(append(postKeys, own...))
	if err != nil {
		return nil, err
	}
	out.Post = per(postBytes, out.Posts)

	likes, err := pipelineInts(ctx, b.rdb, likers, func(p redis.Pipeliner, key string) *redis.IntCmd { return p.ZCard(ctx, key) })
	if err != nil {
		return nil, err
	}
	for _, n := range likes {
		out.Likes += n
	}
	likeBytes, err := sum(likers)
	if err != nil {
		return nil, err
	}
	out.Like = per(likeBytes, out.Likes)

	commentKeys := append([]string{}, lists...)
	buckets := map[string]bool{}
	comments, err := b.members(ctx, lists, func(p redis.Pipeliner, key string) *redis.StringSliceCmd { return p.LRange(ctx, key, 0, -1) })
	if err != nil {
		return nil, err
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
	commentBytes, err := sum(commentKeys)
	if err != nil {
		return nil, err
	}
	out.Comment = per(commentBytes, out.Comments)
	b.logf("bench: bytes per user %.0f, post %.0f, follow %.0f, like %.0f, comment %.0f", out.User, out.Post, out.Follow, out.Like, out.Comment)
	return out, nil
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
