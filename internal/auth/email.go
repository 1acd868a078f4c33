package auth

import (
	"context"
	"strings"

	"github.com/socialgw/gateway/internal/reqlog"
	"github.com/socialgw/gateway/internal/social"
)

// ChangeEmail starts changing the viewer's address when password is
// right: newEmail is reserved (no other account can register it or ask
// for it meanwhile), a confirmation token goes to it and a notice to the
// current address. The address changes only when VerifyEmail confirms it.
func (s *Service) ChangeEmail(ctx context.Context, v social.Viewer, newEmail, password string) (bool, error) {
	newEmail = normalizeLogin(newEmail)
	if err := social.ValidateEmail(newEmail); err != nil {
		return false, err
	}
	u, err := s.Accounts.User(ctx, v.UserID)
	if err != nil {
		return false, err
	}
	if strings.EqualFold(newEmail, u.Email) {
		return false, social.Errorf(social.BadUserInput, "that is already the account's e-mail address")
	}
	if err := s.checkPassword(ctx, u, password); err != nil {
		return false, err
	}
	if err := s.allow(ctx, RuleMailUser, u.ID); err != nil {
		return false, err
	}
	if err := s.Mail.ReserveEmail(ctx, u.ID, newEmail, s.now().Add(VerifyTTL)); err != nil {
		return false, err
	}
	if err := s.queueMail(ctx, MailChange, u.ID, newEmail); err != nil {
		return false, err
	}
	if err := s.queueMail(ctx, MailNotice, u.ID, u.Email, jobNew, newEmail); err != nil {
		// The change goes on; only the courtesy notice is lost.
		reqlog.Logger(ctx).Warn("e-mail change notice not queued", "user", u.ID, "err", err)
	}
	return true, nil
}

// VerifyEmail confirms an address with the token mailed to it: the
// registration's address becomes verified, or a pending change takes
// effect (the new address becomes the account's, verified, and the old
// one is freed). It returns the account.
func (s *Service) VerifyEmail(ctx context.Context, token string) (*social.User, error) {
	uid, ok := parseMailToken(social.TokenVerify, token)
	if !ok {
		return nil, errBadMailToken
	}
	now := s.now()
	t, ok, err := s.Mail.MailToken(ctx, social.TokenVerify, uid)
	if err != nil {
		return nil, err
	}
	hash := hashToken(token)
	if !ok || !sameHash(t.Hash, hash) || !now.Before(t.Expires) {
		return nil, errBadMailToken
	}
	u, err := s.Accounts.User(ctx, uid)
	if err != nil {
		return nil, err
	}
	moving := !strings.EqualFold(t.Email, u.Email)
	if moving {
		// The new address first: a crash after this step leaves the
		// token unspent, and presenting it again finishes the change.
		claimed, err := s.Mail.ClaimEmail(ctx, uid, t.Email)
		if err != nil {
			return nil, err
		}
		if !claimed {
			return nil, social.Errorf(social.Conflict, "the e-mail address is already registered")
		}
	}
	old, ok, err := s.Mail.ConfirmEmail(ctx, uid, hash, t.Email, now)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errBadMailToken
	}
	if !strings.EqualFold(old, t.Email) {
		if err := s.Mail.ReleaseEmail(ctx, uid, old); err != nil {
			return nil, err
		}
	}
	return s.Accounts.User(ctx, uid)
}

// ResendVerification mails the viewer a new confirmation token: to the
// address of its pending change when there is one, else to its address
// when that is not confirmed yet. The previous token stops working.
func (s *Service) ResendVerification(ctx context.Context, v social.Viewer) (bool, error) {
	u, err := s.Accounts.User(ctx, v.UserID)
	if err != nil {
		return false, err
	}
	t, pending, err := s.Mail.MailToken(ctx, social.TokenVerify, u.ID)
	if err != nil {
		return false, err
	}
	kind, to := MailVerify, u.Email
	switch {
	case pending && !strings.EqualFold(t.Email, u.Email):
		kind, to = MailChange, t.Email
	case u.EmailVerified:
		return false, social.Errorf(social.BadUserInput, "the e-mail address is confirmed and no change is pending")
	}
	if err := s.allow(ctx, RuleMailUser, u.ID); err != nil {
		return false, err
	}
	if kind == MailChange {
		// The reservation lasts as long as the new token.
		if err := s.Mail.ReserveEmail(ctx, u.ID, to, s.now().Add(VerifyTTL)); err != nil {
			return false, err
		}
	}
	if err := s.queueMail(ctx, kind, u.ID, to); err != nil {
		return false, err
	}
	return true, nil
}

// CanPost refuses posting to an account whose address is not confirmed,
// when RequireVerified says so.
func (s *Service) CanPost(ctx context.Context, userID string) error {
	if !s.RequireVerified {
		return nil
	}
	u, err := s.Accounts.User(ctx, userID)
	if err != nil {
		return err
	}
	if !u.EmailVerified {
		return social.Errorf(social.Forbidden, "confirm your e-mail address before posting (resendVerification mails the token again)")
	}
	return nil
}

// sendWelcome queues the confirmation e-mail of a new account. The
// account exists whatever happens here: a mail that could not be queued
// is logged, and resendVerification asks again.
func (s *Service) sendWelcome(ctx context.Context, u *social.User) {
	if s.Mail == nil {
		return
	}
	if err := s.queueMail(ctx, MailVerify, u.ID, u.Email); err != nil {
		reqlog.Logger(ctx).Warn("confirmation e-mail not queued", "user", u.ID, "err", err)
	}
}
