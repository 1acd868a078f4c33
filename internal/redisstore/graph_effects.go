package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// Timeline hooks: what the social graph does to home timelines. The
// social-graph code calls them after a successful change; the timeline
// code implements them (backfill on follow, removal on unfollow, block
// and mute). They must be idempotent: a retried mutation calls them again.
//
// Each write is a script in the reader's slot that checks the graph as it
// stands when it runs (homeMergeScript and homePurgeScript keep or drop an
// author by the reader's Following and Mutes), so hooks of quick
// follow/unfollow sequences that run late or twice leave the list as the
// last change wants it.

// afterFollow runs after follower started following followee: it copies
// up to Backfill of the followee's recent posts that the follower may see
// into the follower's home list. When the followee has more, the list's
// floor rises to the oldest post copied, so pages below it are read from
// the followees' own timelines and the older posts are not skipped. A
// followee who is a pulled author is added to the follower's CelebFollowing.
func (s *GraphService) afterFollow(ctx context.Context, follower, followee string) error {
	if err := s.notifyJob(ctx, social.NoteFollow, followee, "", follower, followee); err != nil {
		return err
	}
	return s.backfill(ctx, follower, followee)
}

// afterUnmute runs after muter unmuted muted: like a follow, it copies the
// recent posts of a followee back (the mute removed them, and fan-out
// skipped those posted meanwhile), so every mode shows the same pages
// again. Nothing happens when muter does not follow muted.
func (s *GraphService) afterUnmute(ctx context.Context, muter, muted string) error {
	return s.backfill(ctx, muter, muted)
}

// backfill copies followee's recent posts into follower's home list.
func (s *GraphService) backfill(ctx context.Context, follower, followee string) error {
	n := max(s.set.feed.Backfill, 1)
	var recent *authorRead
	var celeb *redis.BoolCmd
	_, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		// What the follower may see (the reader's index): one more read
		// than copied tells whether the followee has more.
		recent = queueAuthorWindow(ctx, p, s.keys, followee, follower, authorWindow{from: "+inf", to: "-inf", count: n + 1, newestFirst: true})
		celeb = p.HExists(ctx, s.keys.Celebrities(), followee)
		return nil
	})
	if err != nil {
		return fmt.Errorf("backfill %s: %w", followee, err)
	}
	ids := recent.Val()
	more := len(ids) > n
	ids = ids[:min(len(ids), n)]
	posts, err := s.set.postReader(s.rdb, s.keys).visiblePosts(ctx, follower, ids, repeat(followee, len(ids)), nil)
	if err != nil {
		return fmt.Errorf("backfill %s: %w", followee, err)
	}
	var cut int64
	if more && len(ids) > 0 {
		cut, _ = strconv.ParseInt(ids[len(ids)-1], 10, 64)
	}
	args := []any{follower, s.set.feed.HomeCap, "max", cut, "0", "", "", "", s.set.feed.homeTTL()}
	for _, p := range posts {
		if p != nil {
			args = append(args, homeEntry(p.ID, followee))
		}
	}
	_, err = pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		homeMergeScript.EvalSha(ctx, p, homeKeys(s.keys, follower)[:4], args...)
		if celeb.Val() {
			// SADD is idempotent.
			p.SAdd(ctx, s.keys.CelebFollowing(follower), followee)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("backfill %s: %w", followee, err)
	}
	return nil
}

// afterUnfollow runs after follower stopped following followee.
func (s *GraphService) afterUnfollow(ctx context.Context, follower, followee string) error {
	if err := s.notifyJob(ctx, social.NoteFollow, followee, "", follower, followee); err != nil {
		return err
	}
	if err := unfollowedLists(ctx, s.rdb, s.keys, follower, followee); err != nil {
		return err
	}
	return s.purgeHome(ctx, [2]string{follower, followee})
}

// afterBlock runs after blocker blocked blocked (follow edges both ways are
// already gone): each side's posts leave the other's home list.
func (s *GraphService) afterBlock(ctx context.Context, blocker, blocked string) error {
	if err := s.dropRequestsBetween(ctx, blocker, blocked); err != nil {
		return err
	}
	// Nothing either did shows in the other's notifications any more.
	if err := s.queuePurge(ctx, blocked, blocker); err != nil {
		return err
	}
	if err := s.queuePurge(ctx, blocker, blocked); err != nil {
		return err
	}
	// Neither follows the other now: neither stays in the other's lists.
	if err := unfollowedLists(ctx, s.rdb, s.keys, blocker, blocked); err != nil {
		return err
	}
	if err := unfollowedLists(ctx, s.rdb, s.keys, blocked, blocker); err != nil {
		return err
	}
	return s.purgeHome(ctx, [2]string{blocker, blocked}, [2]string{blocked, blocker})
}

// afterMute runs after muter muted muted.
func (s *GraphService) afterMute(ctx context.Context, muter, muted string) error {
	if err := s.queuePurge(ctx, muted, muter); err != nil {
		return err
	}
	return s.purgeHome(ctx, [2]string{muter, muted})
}

// purgeHome removes, for each (reader, author) pair, the author's entries
// from the reader's home list, with one pipeline.
func (s *GraphService) purgeHome(ctx context.Context, pairs ...[2]string) error {
	_, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		for _, rw := range pairs {
			homePurgeScript.EvalSha(ctx, p, homeKeys(s.keys, rw[0]), rw[0], rw[1])
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("remove posts from home timeline: %w", err)
	}
	return nil
}
