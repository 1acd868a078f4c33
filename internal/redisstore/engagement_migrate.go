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
// later call costs one read. It returns how many entries it added to the
// indexes and likes it took back.
func (s *DB) MigrateEngagementIndexes(ctx context.Context) (int64, error) {
	return s.backfillIDs(ctx, layoutEngagement, s.keys.PostSeq(), engagementPosts, s.indexEngagement)
}

// engagementRead is what a step read of one post: likers (member, score)
// and comment ids.
type engagementRead struct {
	post     string
	likers   []redis.Z
	comments []string
}

// indexEngagement indexes the likes and comments of the posts from..to:
// each post's first chunk of likers and comment ids in one pipeline, then
// what they name (indexReads); a post with more than a chunk of either
// goes on by itself (indexRest).
func (s *DB) indexEngagement(ctx context.Context, from, to int64) (int64, error) {
	k := s.keys
	reads := make([]*engagementRead, 0, to-from+1)
	likers := make([]*redis.ZSliceCmd, 0, to-from+1)
	comments := make([]*redis.StringSliceCmd, 0, to-from+1)
	if _, err := s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for p := from; p <= to; p++ {
			post := strconv.FormatInt(p, 10)
			reads = append(reads, &engagementRead{post: post})
			likers = append(likers, pl.ZRangeWithScores(ctx, k.Likers(post), 0, engagementChunk-1))
			comments = append(comments, pl.LRange(ctx, k.PostComments(post), 0, engagementChunk-1))
		}
		return nil
	}); err != nil && !isNil(err) {
		return 0, fmt.Errorf("read likes and comments of posts %d-%d: %w", from, to, err)
	}
	for i, r := range reads {
		r.likers, r.comments = likers[i].Val(), comments[i].Val()
	}
	n, err := s.indexReads(ctx, reads)
	if err != nil {
		return n, err
	}
	for _, r := range reads {
		if int64(len(r.likers)) == engagementChunk || int64(len(r.comments)) == engagementChunk {
			m, err := s.indexRest(ctx, r.post)
			n += m
			if err != nil {
				return n, err
			}
		}
	}
	return n, nil
}

// indexRest indexes all of one post's likes and comments, a chunk at a
// time (the first again: ZADD NX makes that harmless). Likers are walked
// with ZSCAN, which returns every liker present throughout the walk
// whatever others do meanwhile; comments by position, each chunk
// overlapping the last by a tenth, so that comments deleted between two
// reads (which move the rest up) do not make it skip any.
func (s *DB) indexRest(ctx context.Context, post string) (int64, error) {
	k := s.keys
	var n int64
	for cursor := uint64(0); ; {
		pairs, next, err := s.rdb.ZScan(ctx, k.Likers(post), cursor, "", engagementChunk).Result()
		if err != nil {
			return n, fmt.Errorf("read likers of post %s: %w", post, err)
		}
		r := &engagementRead{post: post}
		for j := 0; j+1 < len(pairs); j += 2 {
			score, _ := strconv.ParseFloat(pairs[j+1], 64)
			r.likers = append(r.likers, redis.Z{Member: pairs[j], Score: score})
		}
		m, err := s.indexReads(ctx, []*engagementRead{r})
		n += m
		if err != nil {
			return n, err
		}
		if cursor = next; cursor == 0 {
			break
		}
	}
	step := engagementChunk - max(engagementChunk/10, 1)
	for start := int64(0); ; start += step {
		ids, err := s.rdb.LRange(ctx, k.PostComments(post), start, start+engagementChunk-1).Result()
		if err != nil {
			return n, fmt.Errorf("read comments of post %s: %w", post, err)
		}
		m, err := s.indexReads(ctx, []*engagementRead{{post: post, comments: ids}})
		n += m
		if err != nil || int64(len(ids)) < engagementChunk {
			return n, err
		}
	}
}

// indexReads reads the comments reads name and whether the users they
// name still have an account, then writes the index entries of their
// likes and comments. A like of an account that is gone or being purged
// is taken back, as its purge does (likeScript); a comment of such an
// account is left out of any index (readers do not see it: its author
// reads as missing).
func (s *DB) indexReads(ctx context.Context, reads []*engagementRead) (int64, error) {
	k := s.keys
	rows := make([][]*redis.SliceCmd, len(reads))
	if _, err := s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
		for i, r := range reads {
			for _, id := range r.comments {
				rows[i] = append(rows[i], engagementComment.queue(ctx, pl, k.PostComment(r.post, id)))
			}
		}
		return nil
	}); err != nil && !isNil(err) {
		return 0, fmt.Errorf("read comments: %w", err)
	}
	type entry struct {
		user, member, post string
		score              float64
		like               bool
	}
	var entries []entry
	for i, r := range reads {
		for _, z := range r.likers {
			u, _ := z.Member.(string)
			entries = append(entries, entry{user: u, member: r.post, post: r.post, score: z.Score, like: true})
		}
		for j, id := range r.comments {
			var row commentRow
			engagementComment.decode(&row, rows[i][j].Val())
			if row.comment.AuthorID == "" || row.deletedBy != "" {
				continue // gone, or a tombstone
			}
			entries = append(entries, entry{user: row.comment.AuthorID, member: id, post: r.post, score: float64(row.comment.CreatedAt.UnixMilli())})
		}
	}
	users := make([]string, len(entries))
	for i, e := range entries {
		users[i] = e.user
	}
	live, err := s.accountsLive(ctx, users)
	if err != nil {
		return 0, err
	}
	var added []*redis.IntCmd
	var n int64
	cmds, err := pipelined(ctx, s.rdb, func(pl redis.Pipeliner) error {
		for _, e := range entries {
			switch {
			case live[e.user] && e.like:
				added = append(added, pl.ZAddNX(ctx, k.UserLikes(e.user), redis.Z{Score: e.score, Member: e.member}))
			case live[e.user]:
				added = append(added, pl.ZAddNX(ctx, k.UserComments(e.user), redis.Z{Score: e.score, Member: e.member}))
			case e.like:
				likeScript.EvalSha(ctx, pl, likeKeys(k, e.post), e.user, "unlike")
				n++
			}
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return n, fmt.Errorf("index likes and comments: %w", err)
	}
	for _, c := range added {
		n += c.Val()
	}
	return n, nil
}
