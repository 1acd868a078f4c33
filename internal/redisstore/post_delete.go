package redisstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// DeletePost deletes one of viewerID's posts. The post hash goes at once,
// so the post disappears from post(id) and from every page (all of them
// check it at read time); the job it queues first removes it from the
// followers' home lists and cleans up its audience sets, likes, comments
// and repost links, also when this call dies halfway.
func (s *PostService) DeletePost(ctx context.Context, viewerID, postID string) error {
	if !social.IsID(postID) {
		return social.Errorf(social.NotFound, "post %s not found", postID)
	}
	v := s.set.postReader(s.rdb, s.keys).newVisibility(viewerID, []string{postID})
	if err := v.check(ctx); err != nil {
		return fmt.Errorf("load post %s: %w", postID, err)
	}
	if v.access(0) != social.Visible {
		return social.Errorf(social.NotFound, "post %s not found", postID)
	}
	p := v.post(0)
	if p.AuthorID != viewerID {
		return social.Errorf(social.Forbidden, "only its author may delete a post")
	}
	return s.removePost(ctx, p)
}

// removePost deletes post p: it queues p's delete job, then removes its
// hash and its author's timelines at once. DeletePost runs it for the
// author, and the delete job of an original for each of its plain
// reposts (deletePlainReposts). Each step is idempotent, and the job is
// queued first, so a call cut short is finished by calling it again.
func (s *PostService) removePost(ctx context.Context, p *social.Post) error {
	postID := p.ID
	// A retried XADD queues the job twice: harmless.
	job := deleteJob(p)
	if err := s.rdb.XAdd(ctx, &redis.XAddArgs{Stream: fanoutStream(s.keys, s.set.feed.FanoutShards, postID), Values: job}).Err(); err != nil {
		return fmt.Errorf("queue deletion of post %s: %w", postID, err)
	}
	// DEL, ZREM, LREM and SREM are idempotent. The repost link goes at
	// once too, so the original's repostsCount drops with the page.
	_, err := pipelined(ctx, s.rdb, func(pl redis.Pipeliner) error {
		pl.Del(ctx, s.keys.Post(postID))
		// The ONLY_TO sets of the index go in the job, which reads the
		// audience; a page drops their entries meanwhile (no hash).
		queueUnindex(ctx, pl, s.keys, p.AuthorID, postID, nil)
		pl.LRem(ctx, s.keys.Home(p.AuthorID), 0, homeEntry(postID, p.AuthorID))
		if p.RepostOfID != "" {
			queueUnlinkRepost(ctx, pl, s.keys, postID, p.AuthorID, p.RepostOfID)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("delete post %s: %w", postID, err)
	}
	return nil
}

// deleteJob is the delete job of post p: its fields as the worker reads
// them (HandleFanoutJob; the purge of an account runs the same job's
// steps for each post of the account, purgePost).
func deleteJob(p *social.Post) []any {
	job := []any{jobOp, opDelete, jobPost, p.ID, jobAuthor, p.AuthorID}
	if p.RepostOfID != "" {
		job = append(job, jobRepost, p.RepostOfID, jobRepostAuthor, p.RepostOfAuthorID)
	}
	if len(p.Mentions) > 0 {
		job = append(job, jobMentions, strings.Join(p.Mentions, ","))
	}
	job = append(job, tagJobFields(p)...)
	// The job carries the file keys: the hash that lists them is gone
	// before the worker runs.
	if len(p.Media) > 0 {
		job = append(job, jobMedia, mediaKeys(p.Media))
	}
	return job
}

// queueUnlinkRepost queues taking a deleted repost out of its original's
// reposts (and plain reposts): idempotent.
func queueUnlinkRepost(ctx context.Context, p redis.Pipeliner, k Keys, id, author, original string) {
	repostUnlinkScript.EvalSha(ctx, p, []string{k.PostReposts(original), k.PostPlainReposts(original), k.Post(original), k.PostViewers(original)}, id, author)
}
