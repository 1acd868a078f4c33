package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// layoutPostIndex is the field of Keys.Layout that records the backfill
// of the reader's index: "at:<user id>" once every user up to that id is
// indexed, "done" at the end. Its name changes when the index gains sets
// (postindex2: NotToListed), so that the backfill runs again.
const layoutPostIndex = "postindex2"

// indexFields are what the backfill reads of a post's hash: whether it
// exists, and its visibility.
var indexFields = postRecord.args("author", "vis")

// postIndexBatch is how many of one author's posts a backfill step reads
// (three round trips a step).
const postIndexBatch = 500

// MigratePostIndexes puts the posts written before the reader's index
// existed (postindex.go) into it: user by user, in id order, each post
// into the sets its visibility names. Every step is idempotent (ZADD of
// score = id, only while the post is still in UserPosts:
// authorIndexScript), and the last user done is recorded in Keys.Layout
// after each, so a run cut short resumes there; running it on several
// processes at once is harmless. Once done, a later call costs one read.
// It returns how many posts it went through. Users registered after the
// run began write their posts with the index already.
func (s *DB) MigratePostIndexes(ctx context.Context) (int64, error) {
	return s.backfillIDs(ctx, layoutPostIndex, s.keys.UserSeq(), 1, func(ctx context.Context, u, _ int64) (int64, error) {
		return s.indexAuthor(ctx, strconv.FormatInt(u, 10))
	})
}

// indexAuthor indexes every post in author's UserPosts, postIndexBatch at
// a time, oldest first.
func (s *DB) indexAuthor(ctx context.Context, author string) (int64, error) {
	var done int64
	after := "-inf"
	for {
		ids, err := s.rdb.ZRangeByScore(ctx, s.keys.UserPosts(author), &redis.ZRangeBy{Min: after, Max: "+inf", Count: postIndexBatch}).Result()
		if err != nil {
			return done, fmt.Errorf("list posts of user %s: %w", author, err)
		}
		if err := s.indexPosts(ctx, author, ids); err != nil {
			return done, err
		}
		done += int64(len(ids))
		if len(ids) < postIndexBatch {
			return done, nil
		}
		after = "(" + ids[len(ids)-1]
	}
}

// indexPosts indexes ids, posts of author: their visibility, then the
// audiences of the ONLY_TO and NOT_TO ones, then one authorIndexScript
// each.
func (s *DB) indexPosts(ctx context.Context, author string, ids []string) error {
	if len(ids) == 0 {
		return nil
	}
	rows := make([]*redis.SliceCmd, len(ids))
	vis := make([]social.Visibility, len(ids))
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			rows[i] = hmget(ctx, p, s.keys.Post(id), indexFields)
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("read visibility of %d posts of user %s: %w", len(ids), author, err)
	}
	listed := make([]*redis.StringSliceCmd, len(ids))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			v := rows[i].Val()
			if a, _ := v[0].(string); a == "" {
				vis[i] = "" // gone (its hash deleted): nothing to index
				continue
			}
			name, _ := v[1].(string)
			if vis[i] = social.Visibility(name); vis[i] == "" {
				vis[i] = social.Public
			}
			switch vis[i] {
			case social.OnlyTo:
				listed[i] = p.SMembers(ctx, s.keys.PostOnlyTo(id))
			case social.NotTo:
				listed[i] = p.SMembers(ctx, s.keys.PostNotTo(id))
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("read audiences of posts of user %s: %w", author, err)
	}
	_, err = pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		for i, id := range ids {
			if vis[i] == "" {
				continue
			}
			var audience []string
			if listed[i] != nil {
				audience = listed[i].Val()
			}
			keys := append([]string{s.keys.UserPosts(author)}, postIndexKeys(s.keys, author, vis[i], audience)...)
			authorIndexScript.EvalSha(ctx, p, keys, id)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index posts of user %s: %w", author, err)
	}
	return nil
}
