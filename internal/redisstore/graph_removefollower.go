package redisstore

import (
	"context"

	"github.com/socialgw/gateway/internal/social"
)

// RemoveFollower ends followerID's follow of viewerID without a block:
// it is followerID's unfollow, with its steps and effects (the counts,
// which are the lists' sizes, and viewerID's posts leaving followerID's
// home list), run on viewerID's word. followerID may follow again.
// Idempotent; an unknown user is NOT_FOUND.
func (s *GraphService) RemoveFollower(ctx context.Context, viewerID, followerID string) error {
	if viewerID == followerID {
		return social.Errorf(social.BadUserInput, "you cannot remove yourself as a follower")
	}
	if err := s.checkTarget(ctx, "remove the follower", viewerID, followerID, false); err != nil {
		return err
	}
	return s.runEdit(ctx, s.unfollowEdit(followerID, viewerID))
}
