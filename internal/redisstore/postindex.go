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
// The one rule the index cannot keep is NOT_TO's: a NOT_TO post listing
// the reader is in NotToPosts, which every signed-in reader scans, so
// readers screen what NotToPosts gives them (screen, post_screen.go).
// Those are posts an author wrote against that very reader, one at a
// time, each listing them by name.
//
// authorPostScript writes a post into UserPosts and its index sets in one
// step; removePost and the delete job take it out (the job reads the
// ONLY_TO audience before it deletes it); MigratePostIndexes indexes posts
// written before the index existed.

// postIndexKeys are the sets of the reader's index a post of author
// belongs in, by its visibility: PublicPosts (also for a post of an older
// layout without one), NotToPosts, or the OnlyToPosts of each reader only
// lists (the author reads UserPosts and needs none). At most
// social.MaxAudienceSize + 1 keys (a repost's audience adds its
// original's author).
func postIndexKeys(k Keys, author string, vis social.Visibility, only []string) []string {
	switch vis {
	case social.NotTo:
		return []string{k.NotToPosts(author)}
	case social.OnlyTo:
		keys := make([]string, 0, len(only))
		for _, u := range only {
			if u != author {
				keys = append(keys, k.OnlyToPosts(author, u))
			}
		}
		return keys
	}
	return []string{k.PublicPosts(author)}
}

// queueUnindex queues taking post id of author out of UserPosts and every
// set of the index that may hold it (only: the readers its ONLY_TO
// audience lists, nil when not known yet). ZREM is idempotent.
func queueUnindex(ctx context.Context, p redis.Pipeliner, k Keys, author, id string, only []string) {
	p.ZRem(ctx, k.UserPosts(author), id)
	p.ZRem(ctx, k.PublicPosts(author), id)
	p.ZRem(ctx, k.NotToPosts(author), id)
	for _, key := range postIndexKeys(k, author, social.OnlyTo, only) {
		p.ZRem(ctx, key, id)
	}
}

// authorRead is one queued read of a window of an author's posts as one
// reader may see them (queueAuthorWindow).
type authorRead struct {
	plain  *redis.StringSliceCmd // the author's or an anonymous reader's read
	merged *redis.Cmd            // authorWindowScript's reply
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
// reader, to be screened.
func (r *authorRead) NotTo() []string {
	_, not := r.reply()
	return not
}

func (r *authorRead) reply() (ids, not []string) {
	if r.merged == nil {
		return nil, nil
	}
	v, _ := r.merged.Slice()
	if len(v) == 2 {
		ids, not = strs(v[0]), strs(v[1])
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
		keys = append(keys, k.NotToPosts(author), k.OnlyToPosts(author, reader))
	}
	keys = append(keys, k.User(author), k.Followers(author))
	return &authorRead{merged: authorWindowScript.EvalSha(ctx, p, keys, w.from, w.to, w.count, dir, reader)}
}

// onlyAudience is the audience of post id when vis is ONLY_TO (nil
// otherwise): what the post's index sets are named by.
func onlyAudience(ctx context.Context, rdb redis.UniversalClient, k Keys, id string, vis social.Visibility) ([]string, error) {
	if vis != social.OnlyTo {
		return nil, nil
	}
	only, err := rdb.SMembers(ctx, k.PostOnlyTo(id)).Result()
	if err != nil {
		return nil, fmt.Errorf("load audience of post %s: %w", id, err)
	}
	return only, nil
}

// unindexOnlyTo takes a deleted post out of the OnlyToPosts sets of its
// audience (PostOnlyTo, empty for a post of another visibility). The
// delete job runs it before it deletes the audience: a job cut short
// runs it again.
func (s *FanoutService) unindexOnlyTo(ctx context.Context, post, author string) error {
	only, err := onlyAudience(ctx, s.rdb, s.keys, post, social.OnlyTo)
	if err != nil || len(only) == 0 {
		return err
	}
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		queueUnindex(ctx, p, s.keys, author, post, only)
		return nil
	})
	if err != nil {
		return fmt.Errorf("take post %s out of the reader's index: %w", post, err)
	}
	return nil
}
