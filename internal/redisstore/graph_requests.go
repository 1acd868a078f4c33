package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Follow requests. A locked account (the profile's locked flag) approves
// each follower: a follow of it only adds the follower to its
// FollowRequests (followRequestScript, in its slot) and tells it
// (FOLLOW_REQUEST). Approving runs the follow itself, the same edit and
// hook (notification, home backfill) as a follow of an open account, then
// drops the request; rejecting, or the requester's unfollow, drops it.
// The FOLLOW_REQUEST notification stands while the request does: each
// change queues a note job that reads it.

// requestFollow is the first step of viewerID's follow of userID: true
// when it ends there, a request made (or the follow already there).
// false: userID is not locked, the follow goes on as usual (so does a
// follow of oneself or of a malformed id, which the edit refuses).
func (s *GraphService) requestFollow(ctx context.Context, viewerID, userID string) (bool, error) {
	if viewerID == userID || !social.IsID(userID) {
		return false, nil
	}
	k := s.keys
	res, err := followRequestScript.Run(ctx, s.rdb,
		[]string{k.User(userID), k.Followers(userID), k.FollowRequests(userID), k.Blocks(userID), k.BlockedBy(userID)},
		viewerID, s.set.now().UnixMilli()).Text()
	if err != nil {
		return false, fmt.Errorf("follow %s: request: %w", userID, err)
	}
	switch res {
	case "OPEN":
		return false, nil
	case replyForbidden:
		return true, social.Errorf(social.Forbidden, "you cannot follow user %s", userID)
	case "REQUESTED":
		return true, s.notifyJob(ctx, social.NoteFollowRequest, userID, "", viewerID, userID)
	}
	return true, nil // FOLLOWS
}

// ApproveFollowRequest makes userID a follower of viewerID, whose
// pending request it was: the follow edit with its hook, then the
// request goes. No pending request is NOT_FOUND, with nothing changed.
// A follow refused by a block drops the request.
func (s *GraphService) ApproveFollowRequest(ctx context.Context, viewerID, userID string) error {
	if err := s.hasRequest(ctx, viewerID, userID); err != nil {
		return err
	}
	if err := s.runEdit(ctx, s.followEdit(userID, viewerID)); err != nil {
		if social.ErrorCode(err) == social.Forbidden {
			_ = s.dropRequest(ctx, viewerID, userID)
		}
		return err
	}
	return s.dropRequest(ctx, viewerID, userID)
}

// RejectFollowRequest drops userID's pending request to follow viewerID;
// none is NOT_FOUND.
func (s *GraphService) RejectFollowRequest(ctx context.Context, viewerID, userID string) error {
	return s.dropRequest(ctx, viewerID, userID)
}

// hasRequest is NOT_FOUND unless userID's request to follow account is
// pending.
func (s *GraphService) hasRequest(ctx context.Context, account, userID string) error {
	if !social.IsID(userID) {
		return noRequest(userID)
	}
	_, err := s.rdb.ZScore(ctx, s.keys.FollowRequests(account), userID).Result()
	if isNil(err) {
		return noRequest(userID)
	}
	if err != nil {
		return fmt.Errorf("read follow request of %s: %w", userID, err)
	}
	return nil
}

func noRequest(userID string) error {
	return social.Errorf(social.NotFound, "no pending follow request from user %s", userID)
}

// dropRequest removes requester's pending request to follow account and
// queues the note job that takes its notification away; NOT_FOUND when
// none was pending.
func (s *GraphService) dropRequest(ctx context.Context, account, requester string) error {
	if !social.IsID(requester) || !social.IsID(account) {
		return noRequest(requester)
	}
	n, err := s.rdb.ZRem(ctx, s.keys.FollowRequests(account), requester).Result()
	if err != nil {
		return fmt.Errorf("drop follow request of %s: %w", requester, err)
	}
	if n == 0 {
		return noRequest(requester)
	}
	return s.notifyJob(ctx, social.NoteFollowRequest, account, "", requester, account)
}

// approveBatch is how many requests an unlock reads at a time.
const approveBatch = 100

// approveAll approves every pending request to follow account (an
// unlock), a batch at a time: each approval is a follow edit of its own.
// A request refused by a block is dropped; a failure stops the walk and
// leaves the rest pending, for the next unlock to approve.
func (s *GraphService) approveAll(ctx context.Context, account string) error {
	for {
		ids, err := s.rdb.ZRange(ctx, s.keys.FollowRequests(account), 0, approveBatch-1).Result()
		if err != nil {
			return fmt.Errorf("read follow requests of %s: %w", account, err)
		}
		for _, id := range ids {
			err := s.ApproveFollowRequest(ctx, account, id)
			if err != nil && social.ErrorCode(err) != social.Forbidden && social.ErrorCode(err) != social.NotFound {
				return err
			}
		}
		if len(ids) < approveBatch {
			return nil
		}
	}
}

// dropRequestsBetween removes the requests either of a and b made to the
// other (a block), with their notifications.
func (s *GraphService) dropRequestsBetween(ctx context.Context, a, b string) error {
	for _, pair := range [2][2]string{{a, b}, {b, a}} {
		if err := s.dropRequest(ctx, pair[0], pair[1]); err != nil && social.ErrorCode(err) != social.NotFound {
			return err
		}
	}
	return nil
}

// FollowRequests reads a page of the users asking to follow viewerID,
// newest first.
func (s *GraphService) FollowRequests(ctx context.Context, viewerID string, p social.PageRequest) (social.Connection[string], error) {
	pg, err := listPage(ctx, s.rdb, s.keys, viewerID, readplan.ListKey{List: readplan.ListFollowRequests, Parent: viewerID, Page: p})
	return pg.Users, err
}

// queueRequested queues whether viewerID asked each of ids to follow
// them (viewerRequestedFollow): one ZSCORE in each user's slot.
func queueRequested(ctx context.Context, p redis.Pipeliner, k Keys, viewerID string, ids []string) []*redis.FloatCmd {
	out := make([]*redis.FloatCmd, len(ids))
	for i, id := range ids {
		if social.IsID(id) && id != viewerID {
			out[i] = p.ZScore(ctx, k.FollowRequests(id), viewerID)
		}
	}
	return out
}

// requestedFlags reads queueRequested's replies.
func requestedFlags(cmds []*redis.FloatCmd) []bool {
	out := make([]bool, len(cmds))
	for i, c := range cmds {
		out[i] = c != nil && c.Err() == nil
	}
	return out
}
