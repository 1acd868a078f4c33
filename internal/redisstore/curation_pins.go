package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// Pinned posts: Pins (the user's slot) lists them and holds the cap;
// the post hash's pinned flag (the post's slot) answers Post.pinned with
// the post's other fields. Two slots, two steps, the user's first (it
// decides the cap): a crash between them leaves the post listed in
// pinnedPosts with pinned false until the call is repeated. The delete
// job takes a deleted post out of its author's Pins.

// Pin pins one of viewerID's posts (social.CheckPinnable), at most
// social.MaxPins; idempotent. A sixth pin changes nothing.
func (s *CurationService) Pin(ctx context.Context, viewerID, postID string) error {
	post, err := s.ownPost(ctx, viewerID, postID)
	if err != nil {
		return err
	}
	if err := social.CheckPinnable(viewerID, post); err != nil {
		return err
	}
	k := s.keys
	n, err := pinUserScript.Run(ctx, s.rdb, []string{k.Pins(viewerID)}, postID, "pin", s.now().UnixMilli(), social.MaxPins).Int()
	if err != nil {
		return fmt.Errorf("pin post %s: %w", postID, err)
	}
	if n == 0 {
		return social.TooManyPins()
	}
	ok, err := pinPostScript.Run(ctx, s.rdb, []string{k.Post(postID)}, "on").Int()
	if err != nil {
		return fmt.Errorf("pin post %s: %w", postID, err)
	}
	if ok == 0 { // deleted meanwhile
		s.rdb.ZRem(ctx, k.Pins(viewerID), postID)
		return social.Errorf(social.NotFound, "post %s not found", postID)
	}
	return nil
}

// Unpin unpins one of viewerID's posts; idempotent.
func (s *CurationService) Unpin(ctx context.Context, viewerID, postID string) error {
	if _, err := s.ownPost(ctx, viewerID, postID); err != nil {
		return err
	}
	k := s.keys
	if err := pinUserScript.Run(ctx, s.rdb, []string{k.Pins(viewerID)}, postID, "unpin", 0, social.MaxPins).Err(); err != nil {
		return fmt.Errorf("unpin post %s: %w", postID, err)
	}
	if err := pinPostScript.Run(ctx, s.rdb, []string{k.Post(postID)}, "off").Err(); err != nil {
		return fmt.Errorf("unpin post %s: %w", postID, err)
	}
	return nil
}

// ownPost reads a post for a pin: NOT_FOUND when viewerID may not see
// it, FORBIDDEN when it is not theirs.
func (s *CurationService) ownPost(ctx context.Context, viewerID, postID string) (*social.Post, error) {
	posts, err := s.posts().visiblePosts(ctx, viewerID, []string{postID}, nil, nil)
	if err != nil {
		return nil, err
	}
	if posts[0] == nil {
		return nil, social.Errorf(social.NotFound, "post %s not found", postID)
	}
	if posts[0].AuthorID != viewerID {
		return nil, social.Errorf(social.Forbidden, "post %s is not yours", postID)
	}
	return posts[0], nil
}

// PinnedIDs returns the ids in each user's Pins, most recently pinned
// first, with one pipeline for all the users (User.pinnedPosts of a level
// of users; the posts are then checked for the viewer by the post loader).
func (s *CurationService) PinnedIDs(ctx context.Context, userIDs []string) ([][]string, error) {
	out := make([][]string, len(userIDs))
	cmds := make([]*redis.StringSliceCmd, len(userIDs))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, u := range userIDs {
			if social.IsID(u) {
				cmds[i] = p.ZRevRange(ctx, s.keys.Pins(u), 0, social.MaxPins-1)
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the pinned posts of %d users: %w", len(userIDs), err)
	}
	for i, c := range cmds {
		if c != nil {
			out[i] = c.Val()
		}
	}
	return out, nil
}

// DeleteUserPins removes userID's pins (account deletion): their Pins and
// each post's pinned flag. Re-runnable.
func (s *CurationService) DeleteUserPins(ctx context.Context, userID string) error {
	k := s.keys
	ids, err := s.rdb.ZRange(ctx, k.Pins(userID), 0, -1).Result()
	if err != nil {
		return fmt.Errorf("read the pins of %s: %w", userID, err)
	}
	for _, id := range ids {
		if err := pinPostScript.Run(ctx, s.rdb, []string{k.Post(id)}, "off").Err(); err != nil {
			return fmt.Errorf("unpin post %s: %w", id, err)
		}
	}
	return wrapErr(s.rdb.Del(ctx, k.Pins(userID)).Err(), "drop the pins of %s", userID)
}
