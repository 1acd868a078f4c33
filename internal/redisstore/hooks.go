package redisstore

import "context"

// Timeline hooks: what the social graph does to home timelines. The
// social-graph code calls them after a successful change; the timeline
// code implements them (backfill on follow, removal on unfollow, block
// and mute). They must be idempotent: a retried mutation calls them again.

// afterFollow runs after follower started following followee.
func (s *Store) afterFollow(ctx context.Context, follower, followee string) error { return nil }

// afterUnfollow runs after follower stopped following followee.
func (s *Store) afterUnfollow(ctx context.Context, follower, followee string) error { return nil }

// afterBlock runs after blocker blocked blocked (follow edges both ways are
// already gone).
func (s *Store) afterBlock(ctx context.Context, blocker, blocked string) error { return nil }

// afterMute runs after muter muted muted.
func (s *Store) afterMute(ctx context.Context, muter, muted string) error { return nil }
