package redisstore

import (
	"context"

	"github.com/socialgw/gateway/internal/social"
)

// Stubs until the social-graph issue lands; delete this file then.

// UserCounts: social-graph issue.
func (s *Store) UserCounts(ctx context.Context, ids []string) ([]social.UserCounts, error) {
	return nil, notYet("user counters")
}

// Relations: social-graph issue.
func (s *Store) Relations(ctx context.Context, viewerID string, ids []string) ([]social.Relation, error) {
	return nil, notYet("relations")
}

func (s *Store) Follow(ctx context.Context, viewerID, userID string) error { return notYet("follow") }
func (s *Store) Unfollow(ctx context.Context, viewerID, userID string) error {
	return notYet("unfollow")
}
func (s *Store) Block(ctx context.Context, viewerID, userID string) error   { return notYet("block") }
func (s *Store) Unblock(ctx context.Context, viewerID, userID string) error { return notYet("unblock") }
func (s *Store) Mute(ctx context.Context, viewerID, userID string) error    { return notYet("mute") }
func (s *Store) Unmute(ctx context.Context, viewerID, userID string) error  { return notYet("unmute") }
func (s *Store) Followers(ctx context.Context, userID string, p social.PageRequest) (social.Connection[string], error) {
	return social.Connection[string]{}, notYet("followers")
}
func (s *Store) Following(ctx context.Context, userID string, p social.PageRequest) (social.Connection[string], error) {
	return social.Connection[string]{}, notYet("following")
}
func (s *Store) CommonFollowing(ctx context.Context, userID, otherID string, p social.PageRequest) (social.Connection[string], error) {
	return social.Connection[string]{}, notYet("commonFollowing")
}
