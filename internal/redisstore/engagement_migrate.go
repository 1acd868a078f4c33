package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"
)

// layoutEngagement is the field of Keys.Layout that records the backfill
// of the users' indexes of their likes and comments (UserLikes,
// UserComments): "at:<post id>" once every post up to that id is done,
// "done" at the end.
const layoutEngagement = "engagement"

// engagementPosts is how many posts a backfill step reads (three round
// trips a step).
const engagementPosts = 100

// engagementChunk is how many likers or comment ids of one post a read
// brings (a variable for the tests).
var engagementChunk int64 = 1000

// engagementComment is what the backfill reads of a comment.
var engagementComment = commentRecord.view("author", "created", "deleted")

// MigrateEngagementIndexes puts the likes and comments written before
// the users' indexes of them existed into those indexes (UserLikes,
// UserComments), which an account's purge removes them by and its data
// export lists: post by post, in id order, each liker's like scored by
// when it was made (its score in Likers), each comment by its created
// time. ZADD NX leaves what the writers indexed alone, so every step is
// idempotent, and the last post done is recorded in Keys.Layout after
// each step, so a run cut short resumes there; running it on several
// processes at once is harmless. A like taken back while the run passes
// its post may stay in the index: the purge's unlike of it changes
// nothing, and the export checks each like against Likers. Once done, a
// later call costs one read. It returns how many likes and comments it
// went through.
func (s *DB) MigrateEngagementIndexes(ctx context.Context) (int64, error) {
	return s.backfillIDs(ctx, layoutEngagement, s.keys.PostSeq(), engagementPosts, s.indexEngagement)
}

// engagementRead is what a step read of one post.
type engagementRead struct {
	post     string
	likers   *redis.ZSliceCmd
	comments *redis.StringSliceCmd
	rows     []*redis.SliceCmd
}

// indexEngagement indexes the likes and comments of the posts from..to:
// each post's first chunk of likers and comment ids, then the comments'
// authors and times, then the index entries, one pipeline each; a post
// with more than a chunk of either goes on by itself (indexRest).
func (s *DB) indexEngagement(ctx context.Context, from, to int64) (int64, error) {
	k := s.keys
	reads := make([]*engagementRead, 0, to-from+1)
	for p := from; p <= to; p++ {
		reads = append(reads, &engagementRead{post: strconv.FormatInt(p, 10)})
	}
	if _, err := s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for _, r := range reads {
			r.likers = pl.ZRangeWithScores(ctx, k.Likers(r.post), 0, engagementChunk-1)
			r.comments = pl.LRange(ctx, k.PostComments(r.post), 0, engagementChunk-1)
		}
		return nil
	}); err != nil && !isNil(err) {
		return 0, fmt.Errorf("read likes and comments of posts %d-%d: %w", from, to, err)
	}
	n, err := s.indexReads(ctx, reads)
	if err != nil {
		return n, err
	}
	for _, r := range reads {
		if int64(len(r.likers.Val())) == engagementChunk || int64(len(r.comments.Val())) == engagementChunk {
			m, err := s.indexRest(ctx, r.post)
			n += m
			if err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// indexRest indexes one post's likes and comments past the first chunk.
func (s *DB) indexRest(ctx context.Context, post string) (int64, error) {
	k := s.keys
	var n int64
	for start := engagementChunk; ; start += engagementChunk {
		r := &engagementRead{post: post}
		if _, err := s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
			r.likers = pl.ZRangeWithScores(ctx, k.Likers(post), start, start+engagementChunk-1)
			r.comments = pl.LRange(ctx, k.PostComments(post), start, start+engagementChunk-1)
			return nil
		}); err != nil && !isNil(err) {
			return n, fmt.Errorf("read likes and comments of post %s: %w", post, err)
		}
		m, err := s.indexReads(ctx, []*engagementRead{r})
		n += m
		if err != nil || (int64(len(r.likers.Val())) < engagementChunk && int64(len(r.comments.Val())) < engagementChunk) {
			return n, err
		}
	}
}

// indexReads reads the comments reads name, then writes the index
// entries of their likes and comments.
func (s *DB) indexReads(ctx context.Context, reads []*engagementRead) (int64, error) {
	k := s.keys
	if _, err := s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for _, r := range reads {
			for _, id := range r.comments.Val() {
				r.rows = append(r.rows, engagementComment.queue(ctx, pl, k.PostComment(r.post, id)))
			}
		}
		return nil
	}); err != nil && !isNil(err) {
		return 0, fmt.Errorf("read comments: %w", err)
	}
	var n int64
	cmds, err := s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for _, r := range reads {
			for _, z := range r.likers.Val() {
				u, _ := z.Member.(string)
				pl.ZAddNX(ctx, k.UserLikes(u), redis.Z{Score: z.Score, Member: r.post})
				n++
			}
			for i, id := range r.comments.Val() {
				var row commentRow
				engagementComment.decode(&row, r.rows[i].Val())
				if row.comment.AuthorID == "" || row.deletedBy != "" {
					continue // gone, or a tombstone
				}
				pl.ZAddNX(ctx, k.UserComments(row.comment.AuthorID), redis.Z{Score: float64(row.comment.CreatedAt.UnixMilli()), Member: id})
				n++
			}
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return n, fmt.Errorf("index likes and comments: %w", err)
	}
	return n, nil
}
