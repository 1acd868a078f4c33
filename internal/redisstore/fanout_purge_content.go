package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// The stages of an account's purge that remove what it wrote: its
// comments, its likes and its posts (fanout_purge.go runs them).

// batch reads the first purgeBatchSize members of the zset key and, for
// each, the hash field at(member) names (one pipeline; "" when absent).
func (p *purge) batch(ctx context.Context, key string, at func(string) (string, string)) ([]string, []string, error) {
	ids, err := p.s.rdb.ZRange(ctx, key, 0, purgeBatchSize-1).Result()
	if err != nil || len(ids) == 0 {
		return nil, nil, err
	}
	cmds := make([]*redis.StringCmd, len(ids))
	if _, err := p.s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for i, id := range ids {
			hash, field := at(id)
			cmds[i] = pl.HGet(ctx, hash, field)
		}
		return nil
	}); err != nil && !isNil(err) {
		return nil, nil, fmt.Errorf("read %d of %s: %w", len(ids), key, err)
	}
	vals := make([]string, len(ids))
	for i, c := range cmds {
		vals[i] = c.Val()
	}
	return ids, vals, nil
}

// comments deletes a batch of the account's comments as their author
// would (EngagementService.DeleteComment: the post's list, count and
// packed comments, the notifications they raised), and the tombstones
// that leaves.
func (p *purge) comments(ctx context.Context) (bool, error) {
	k := p.s.keys
	ids, posts, err := p.batch(ctx, k.UserComments(p.id), func(id string) (string, string) { return k.CommentPost(id), id })
	if err != nil || len(ids) == 0 {
		return err == nil, err
	}
	eng := &EngagementService{rdb: p.s.rdb, keys: k, set: p.s.set}
	var tombs []string
	for i, id := range ids {
		post := posts[i]
		if post == "" {
			continue // gone with its post
		}
		// The answers to it stay, but no longer name its author.
		answers, err := p.s.rdb.LRange(ctx, k.CommentReplies(post, id), 0, -1).Result()
		if err != nil {
			return false, fmt.Errorf("read the answers to comment %s: %w", id, err)
		}
		if len(answers) > 0 {
			if _, err := p.s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
				for _, a := range answers {
					pl.HDel(ctx, k.PostComment(post, a), commentRecord.name("rto"))
				}
				return nil
			}); err != nil {
				return false, fmt.Errorf("unname the answers to comment %s: %w", id, err)
			}
		}
		if err := eng.DeleteComment(ctx, p.id, id); err != nil && !social.IsCode(err, social.NotFound) && !social.IsCode(err, social.Forbidden) {
			return false, err
		}
		tombs = append(tombs, k.PostComment(post, id))
	}
	return false, p.dropMembers(ctx, k.UserComments(p.id), ids, func(pl redis.Pipeliner) {
		// Tombstones answer a retried delete for a minute: none comes.
		for _, t := range tombs {
			pl.Del(ctx, t)
		}
	})
}

// likes takes back a batch of the account's likes (likeScript, which
// sets each post's count), with the job that updates the notification
// each raised.
func (p *purge) likes(ctx context.Context) (bool, error) {
	k := p.s.keys
	ids, authors, err := p.batch(ctx, k.UserLikes(p.id), func(id string) (string, string) { return k.Post(id), postAuthorField })
	if err != nil || len(ids) == 0 {
		return err == nil, err
	}
	now := p.s.set.now()
	return false, p.dropMembers(ctx, k.UserLikes(p.id), ids, func(pl redis.Pipeliner) {
		for i, id := range ids {
			likeScript.EvalSha(ctx, pl, likeKeys(k, id), p.id, "unlike")
			if a := authors[i]; a != "" {
				queueNote(ctx, pl, k, p.s.set.feed.FanoutShards, now, social.NoteLike, id, "", p.id, a)
			}
		}
	})
}

// posts deletes a batch of the account's posts, each with the steps of
// its delete job (deletePost) but for the followers' home lists, which
// the followers stage empties of the account's entries at once.
func (p *purge) posts(ctx context.Context) (bool, error) {
	k := p.s.keys
	ids, err := p.s.rdb.ZRange(ctx, k.UserPosts(p.id), 0, purgePostBatch-1).Result()
	if err != nil || len(ids) == 0 {
		return err == nil, err
	}
	v := p.s.set.postReader(p.s.rdb, k).newVisibility(p.id, ids)
	if err := v.check(ctx); err != nil {
		return false, fmt.Errorf("load %d posts: %w", len(ids), err)
	}
	for i, id := range ids {
		post := v.post(i)
		if post == nil || post.AuthorID != p.id {
			// Its hash is gone (a delete cut short): only the index.
			if _, err := pipelined(ctx, p.s.rdb, func(pl redis.Pipeliner) error {
				queueUnindex(ctx, pl, k, p.id, id, nil)
				return nil
			}); err != nil {
				return false, fmt.Errorf("unindex post %s: %w", id, err)
			}
			continue
		}
		if err := p.s.deletePost(ctx, jobMap(deleteJob(post)), false); err != nil {
			return false, err
		}
	}
	return false, nil
}

// jobMap turns a job's fields into the map the worker hands a handler.
func jobMap(fields []any) map[string]string {
	m := make(map[string]string, len(fields)/2)
	for i := 0; i+1 < len(fields); i += 2 {
		m[fmt.Sprint(fields[i])] = fmt.Sprint(fields[i+1])
	}
	return m
}
