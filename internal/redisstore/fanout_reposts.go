package redisstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// plainRepostsBatch bounds one step of deletePlainReposts: the claims one
// HSCAN returns, and the reposts one pipeline loads.
const plainRepostsBatch = 500

// repostRemoval is what removing a plain repost reads of it: enough to
// tell it is the reposter's plain repost of the original, and to queue
// its delete job (removePost).
var repostRemoval = postRecord.view("author", "content", "repost", "rauthor", "mentions", "media")

// deletePlainReposts deletes the plain reposts (reposts without content)
// of a deleted post, as their authors would: each one's hash and its
// author's timelines at once, and its own delete job for the rest (home
// lists, notifications). A quote stays; its repostOf reads null.
//
// It runs in the original's delete job, before the job deletes
// PostPlainReposts, which lists the reposts: a batch at a time (HSCAN in
// the original's slot, then each repost in its own slot), each step
// idempotent, so a job cut short finds the reposts it has not removed yet
// still listed (removing one also takes its claim out of the list).
func (s *FanoutService) deletePlainReposts(ctx context.Context, original string) error {
	key := s.keys.PostPlainReposts(original)
	var cursor uint64
	for {
		kv, next, err := s.rdb.HScan(ctx, key, cursor, "", plainRepostsBatch).Result()
		if err != nil {
			return fmt.Errorf("list plain reposts of post %s: %w", original, err)
		}
		if err := s.removePlainReposts(ctx, original, kv); err != nil {
			return err
		}
		if cursor = next; cursor == 0 {
			return nil
		}
	}
}

// removePlainReposts removes the reposts of claims (reposter, claim
// pairs of PostPlainReposts(original)) whose hash says they are their
// reposter's plain repost of original. A claim whose repost is not
// written yet is left: its fan-out job finds the original gone
// (fanOutPost) and removes it then.
func (s *FanoutService) removePlainReposts(ctx context.Context, original string, claims []string) error {
	ids := make([]string, 0, len(claims)/2)
	for i := 0; i+1 < len(claims); i += 2 {
		id, _, _ := strings.Cut(claims[i+1], "|")
		ids = append(ids, id)
	}
	rows := make([]*redis.SliceCmd, len(ids))
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			rows[i] = repostRemoval.queue(ctx, p, s.keys.Post(id))
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("load plain reposts of post %s: %w", original, err)
	}
	for i, id := range ids {
		var row postRow
		repostRemoval.decode(&row, rows[i].Val())
		if row.post.AuthorID != claims[2*i] || row.post.RepostOfID != original || !row.post.Plain() {
			continue
		}
		row.post.ID = id
		if err := s.posts.removePost(ctx, &row.post); err != nil {
			return fmt.Errorf("delete plain repost %s of post %s: %w", id, original, err)
		}
	}
	// The reposters' notifications of the original's edits go with it.
	k := s.keys
	_, err = pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		for i := 0; i+1 < len(claims); i += 2 {
			if r := claims[i]; social.IsID(r) {
				notePostPurge.EvalSha(ctx, p, []string{k.Notes(r), k.NoteData(r), k.NoteOpen(r)}, k.NoteActors(r, ""), original)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("take post %s out of its reposters' notifications: %w", original, err)
	}
	return nil
}

// orphanPlainRepost removes p (post, as fan-out read it) when it is a
// plain repost whose original is gone: its original went before it was
// written, after the original's delete job looked for its plain reposts.
// It reports whether it removed it.
func (s *FanoutService) orphanPlainRepost(ctx context.Context, post string, p *social.Post) (bool, error) {
	if !p.Plain() {
		return false, nil
	}
	n, err := s.rdb.Exists(ctx, s.keys.Post(p.RepostOfID)).Result()
	if err != nil {
		return false, fmt.Errorf("look up original %s of repost %s: %w", p.RepostOfID, post, err)
	}
	if n == 1 {
		return false, nil
	}
	p.ID = post
	return true, s.posts.removePost(ctx, p)
}
