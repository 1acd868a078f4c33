package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// The reader's index of an author's posts.
//
// UserPosts holds every post of an author; beside it, in the author's
// slot, the index splits them by audience: PublicPosts (PUBLIC),
// NotToPosts (NOT_TO) and one OnlyToPosts(author, reader) per reader an
// ONLY_TO post lists. What a signed-in reader other than the author may
// see of an author's posts is in PublicPosts, NotToPosts and their own
// OnlyToPosts, so their scans (a user's timeline, pulled authors and
// rebuilds of home lists, a follow's backfill) merge those three and never
// read a post addressed only to others: the cost of a page follows what
// the reader may see, not what is hidden from them. An anonymous reader
// reads PublicPosts alone, the author UserPosts.
//
// A NOT_TO post listing the reader is in NotToPosts, which every
// signed-in reader scans, and also in NotToListed(author, reader): the
// scan (authorWindowScript) steps over those inside Redis, so neither a
// page's length nor its hasNextPage nor its cursor depends on them.
// Readers still screen what NotToPosts gives them (screen,
// post_screen.go): posts written before NotToListed existed are in it
// only once MigratePostIndexes has run.
//
// authorPostScript writes a post into UserPosts and its index sets in one
// step; removePost and the delete job take it out (the job reads the
// ONLY_TO audience before it deletes it); MigratePostIndexes indexes posts
// written before the index existed.

// postIndexKeys are the sets of the reader's index a post of author
// belongs in, by its visibility and the readers its audience lists:
// PublicPosts (also for a post of an older layout without one),
// NotToPosts with the NotToListed of each listed reader, or the
// OnlyToPosts of each listed reader (the author reads UserPosts and needs
// none). At most social.MaxAudienceSize + 2 keys (a repost's audience
// adds its original's author).
func postIndexKeys(k Keys, author string, vis social.Visibility, listed []string) []string {
	var keys []string
	per := k.OnlyToPosts
	switch vis {
	case social.NotTo:
		keys, per = []string{k.NotToPosts(author)}, k.NotToListed
	case social.OnlyTo:
	default:
		return []string{k.PublicPosts(author)}
	}
	for _, u := range listed {
		if u != author {
			keys = append(keys, per(author, u))
		}
	}
	return keys
}

// queueUnindex queues taking post id of author out of UserPosts and every
// set of the index that may hold it (listed: the readers its audience
// lists, nil when not known yet). ZREM is idempotent.
func queueUnindex(ctx context.Context, p redis.Pipeliner, k Keys, author, id string, listed []string) {
	p.ZRem(ctx, k.UserPosts(author), id)
	p.ZRem(ctx, k.PublicPosts(author), id)
	p.ZRem(ctx, k.NotToPosts(author), id)
	for _, u := range listed {
		if u != author {
			p.ZRem(ctx, k.OnlyToPosts(author, u), id)
			p.ZRem(ctx, k.NotToListed(author, u), id)
		}
	}
}

// authorRead is one queued read of a window of an author's posts as one
// reader may see them (queueAuthorWindow).
type authorRead struct {
	plain  *redis.StringSliceCmd // the author's or an anonymous reader's read
	merged *redis.Cmd            // authorWindowScript's reply
	// ctx is the operation whose read budget pays for the posts the
	// script stepped over, once, when the reply is first read.
	ctx     context.Context
	charged bool
}

// Val is the ids read, in the window's order.
func (r *authorRead) Val() []string {
	if r.plain != nil {
		return r.plain.Val()
	}
	ids, _ := r.reply()
	return ids
}

// NotTo is the ids read from NotToPosts: those whose audience may list the
// reader (when NotToListed lacks them), to be screened.
func (r *authorRead) NotTo() []string {
	_, not := r.reply()
	return not
}

func (r *authorRead) reply() (ids, not []string) {
	if r.merged == nil {
		return nil, nil
	}
	v, _ := r.merged.Slice()
	if len(v) == 3 {
		ids, not = strs(v[0]), strs(v[1])
		if skipped, _ := v[2].(int64); !r.charged && skipped > 0 {
			social.ChargeReadBudget(r.ctx, int(skipped))
		}
		r.charged = true
	}
	return ids, not
}

// authorWindow is a window of an author's posts: from the bound it starts
// at to the one it runs to (ZRANGEBYSCORE's syntax, "(123", "+inf"), at
// most count ids, newest first or oldest first.
type authorWindow struct {
	from, to    string
	count       int
	newestFirst bool
}

// queueAuthorWindow queues the read of a window of author's posts as
// reader may see them: the author reads UserPosts, an anonymous reader
// ("") PublicPosts, anyone else the reader's index; but for the author,
// through authorWindowScript, which reads nothing of a locked account
// for a reader who does not follow it. One command in the author's slot
// either way.
func queueAuthorWindow(ctx context.Context, p redis.Pipeliner, k Keys, author, reader string, w authorWindow) *authorRead {
	if reader == author {
		key := k.UserPosts(author)
		if w.newestFirst {
			return &authorRead{plain: p.ZRevRangeByScore(ctx, key, &redis.ZRangeBy{Max: w.from, Min: w.to, Count: int64(w.count)})}
		}
		return &authorRead{plain: p.ZRangeByScore(ctx, key, &redis.ZRangeBy{Min: w.from, Max: w.to, Count: int64(w.count)})}
	}
	dir := "fwd"
	if w.newestFirst {
		dir = "rev"
	}
	keys := []string{k.PublicPosts(author)}
	if reader != "" {
		keys = append(keys, k.NotToPosts(author), k.OnlyToPosts(author, reader), k.NotToListed(author, reader))
	}
	keys = append(keys, k.User(author), k.Followers(author))
	return &authorRead{merged: authorWindowScript.EvalSha(ctx, p, keys, w.from, w.to, w.count, dir, reader), ctx: ctx}
}

// listedAudience is the readers the audience of post id lists when vis
// is ONLY_TO or NOT_TO (nil otherwise): what the post's per-reader index
// sets are named by.
func listedAudience(ctx context.Context, rdb redis.UniversalClient, k Keys, id string, vis social.Visibility) ([]string, error) {
	var key string
	switch vis {
	case social.OnlyTo:
		key = k.PostOnlyTo(id)
	case social.NotTo:
		key = k.PostNotTo(id)
	default:
		return nil, nil
	}
	listed, err := rdb.SMembers(ctx, key).Result()
	if err != nil {
		return nil, fmt.Errorf("load audience of post %s: %w", id, err)
	}
	return listed, nil
}

// unindexListed takes a deleted post out of the per-reader sets of its
// audience (OnlyToPosts or NotToListed of the readers PostOnlyTo or
// PostNotTo lists; both are read, as the hash may be gone). The delete job
// runs it before it deletes the audience: a job cut short runs it again.
func (s *FanoutService) unindexListed(ctx context.Context, post, author string) error {
	var only, not *redis.StringSliceCmd
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		only, not = p.SMembers(ctx, s.keys.PostOnlyTo(post)), p.SMembers(ctx, s.keys.PostNotTo(post))
		return nil
	}); err != nil {
		return fmt.Errorf("load audience of post %s: %w", post, err)
	}
	listed := append(only.Val(), not.Val()...)
	if len(listed) == 0 {
		return nil
	}
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		queueUnindex(ctx, p, s.keys, author, post, listed)
		return nil
	})
	if err != nil {
		return fmt.Errorf("take post %s out of the reader's index: %w", post, err)
	}
	return nil
}
