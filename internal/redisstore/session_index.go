package redisstore

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// sessionIndexSlack is how many entries a user's session index may hold
// past its live sessions before CreateSession prunes those that expired:
// the index stays bounded by the live sessions plus this, and a login
// pays for a prune only once in that many.
const sessionIndexSlack = 32

// trackSession adds a new session to its user's index (Keys.UserSessions),
// pruning entries of sessions that expired once the index has grown past
// sessionIndexSlack of them.
func (s *SessionService) trackSession(ctx context.Context, userID, family string) error {
	k := s.keys.UserSessions(userID)
	n, err := s.rdb.SAdd(ctx, k, family).Result()
	if err != nil {
		return fmt.Errorf("index session: %w", err)
	}
	if n == 0 {
		return nil
	}
	size, err := s.rdb.SCard(ctx, k).Result()
	if err != nil || size%sessionIndexSlack != 0 {
		return err
	}
	_, err = s.pruneSessions(ctx, userID, "")
	return err
}

// pruneSessions reads userID's session index, drops the entries whose
// session is gone, and returns the live sessions other than keep.
func (s *SessionService) pruneSessions(ctx context.Context, userID, keep string) ([]string, error) {
	k := s.keys.UserSessions(userID)
	members, err := s.rdb.SMembers(ctx, k).Result()
	if err != nil {
		return nil, fmt.Errorf("read sessions of %s: %w", userID, err)
	}
	exists := make([]*redis.IntCmd, len(members))
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, m := range members {
			exists[i] = p.Exists(ctx, s.keys.Session(m))
		}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("check sessions of %s: %w", userID, err)
	}
	var live, gone []string
	for i, m := range members {
		switch {
		case exists[i].Val() == 0:
			gone = append(gone, m)
		case m != keep:
			live = append(live, m)
		}
	}
	if len(gone) > 0 {
		if err := s.rdb.SRem(ctx, k, gone).Err(); err != nil {
			return nil, fmt.Errorf("prune sessions of %s: %w", userID, err)
		}
	}
	return live, nil
}

// RevokeUserSessions ends every session of userID but keep ("" for all):
// their refresh tokens stop working, and their access tokens and open
// websockets with them (Revoked finds the session gone), as a logout does.
func (s *SessionService) RevokeUserSessions(ctx context.Context, userID, keep string) error {
	live, err := s.pruneSessions(ctx, userID, keep)
	if err != nil || len(live) == 0 {
		return err
	}
	if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, m := range live {
			p.Del(ctx, s.keys.Session(m))
		}
		p.SRem(ctx, s.keys.UserSessions(userID), live)
		return nil
	}); err != nil {
		return fmt.Errorf("revoke sessions of %s: %w", userID, err)
	}
	return nil
}

// ClearSessions ends every session of userID and deletes its index (the
// account's deletion calls it).
func (s *SessionService) ClearSessions(ctx context.Context, userID string) error {
	if err := s.RevokeUserSessions(ctx, userID, ""); err != nil {
		return err
	}
	return s.rdb.Del(ctx, s.keys.UserSessions(userID)).Err()
}

// RetireSession keeps a session only for what its access tokens have
// left to live (ttl): its refresh token stops working (the current hash
// is replaced by one no token has, and the grace window closed) and the
// session expires after ttl, so its open websockets run until their token
// expires, as they would have anyway. A session that is gone stays gone.
func (s *SessionService) RetireSession(ctx context.Context, family string, ttl time.Duration) error {
	k := s.keys.Session(family)
	if err := updateIfExistsScript.Run(ctx, s.rdb, []string{k}, "cur", "retired", "prev", "").Err(); err != nil {
		return fmt.Errorf("retire session: %w", err)
	}
	return s.rdb.PExpire(ctx, k, ttl).Err()
}
