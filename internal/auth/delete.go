package auth

import (
	"context"
	"fmt"

	"github.com/socialgw/gateway/internal/social"
)

// AccountDeleter deletes accounts (redisstore.AccountService): hidden at
// once, purged by the fan-out workers.
type AccountDeleter interface {
	DeleteAccount(ctx context.Context, userID string) error
}

// DeleteAccount deletes the viewer's account when password is right (a
// wrong one: BAD_USER_INPUT, nothing changed, one of the account's
// password checks spent): the account is hidden at once, every session
// ends (their access tokens and websockets with them), and the store's
// purge removes the rest.
func (s *Service) DeleteAccount(ctx context.Context, v social.Viewer, password string) (bool, error) {
	if s.Deleter == nil {
		return false, fmt.Errorf("delete account: no deleter configured")
	}
	u, err := s.Accounts.User(ctx, v.UserID)
	if err != nil {
		return false, err
	}
	if err := s.checkPassword(ctx, u, password); err != nil {
		return false, err
	}
	if err := s.Deleter.DeleteAccount(ctx, u.ID); err != nil {
		return false, err
	}
	if err := s.EndSessions.RevokeUserSessions(ctx, u.ID, ""); err != nil {
		return false, fmt.Errorf("end sessions: %w", err)
	}
	return true, nil
}
