package auth

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/socialgw/gateway/internal/clientaddr"
	"github.com/socialgw/gateway/internal/social"
)

// MailStore keeps what the account e-mail flows need: the queue the
// e-mails go through, e-mail tokens (hashes only), addresses reserved by
// pending changes, and passwords (redisstore.MailService).
type MailStore interface {
	QueueMail(ctx context.Context, job map[string]string) error
	SaveMailToken(ctx context.Context, purpose, userID string, t social.MailToken) error
	MailToken(ctx context.Context, purpose, userID string) (social.MailToken, bool, error)
	ResetPassword(ctx context.Context, userID, tokenHash, passwordHash string, now time.Time) (bool, error)
	ConfirmEmail(ctx context.Context, userID, tokenHash, email string, now time.Time) (old string, ok bool, err error)
	ReserveEmail(ctx context.Context, userID, email string, until time.Time) error
	ClaimEmail(ctx context.Context, userID, email string) (bool, error)
	ReleaseEmail(ctx context.Context, userID, email string) error
	SetPassword(ctx context.Context, userID, passwordHash string) error
	UserIDByEmail(ctx context.Context, email string) (string, error)
}

// SessionEnder ends a user's sessions (redisstore.SessionService).
type SessionEnder interface {
	// RevokeUserSessions ends every session of userID but keep ("": all).
	RevokeUserSessions(ctx context.Context, userID, keep string) error
	// RetireSession lets a session's refresh token go and ends the
	// session after ttl, when its access tokens have expired.
	RetireSession(ctx context.Context, family string, ttl time.Duration) error
}

// Rate-limit rules of the e-mail flows (see internal/ratelimit).
const (
	// RuleResetIP and RuleResetAddress bound password-reset requests per
	// client address and per address asked for, whether an account has
	// it or not.
	RuleResetIP      = "reset-ip"
	RuleResetAddress = "reset-address"
	// RuleMailUser bounds the e-mails one account has sent to itself
	// (changeEmail, resendVerification).
	RuleMailUser = "mail-user"
	// RulePasswordUser bounds the password checks of a signed-in account
	// (changePassword, changeEmail, deleteAccount), so a stolen access
	// token cannot be used to guess the password.
	RulePasswordUser = "password-user"
)

// Lifetimes of e-mail tokens.
const (
	// DefaultResetTTL is how long a reset token works (RESET_TOKEN_TTL).
	DefaultResetTTL = 30 * time.Minute
	// VerifyTTL is how long a confirmation token works, and so how long
	// an address asked for by changeEmail stays reserved.
	VerifyTTL = 24 * time.Hour
)

var (
	errBadMailToken  = social.Errorf(social.BadUserInput, "invalid, used or expired token")
	errWrongPassword = social.Errorf(social.BadUserInput, "the password is wrong")
)

// now is the clock of e-mail tokens: the access tokens' (tests move it).
func (s *Service) now() time.Time { return s.Tokens.now() }

func (s *Service) resetTTL() time.Duration {
	if s.ResetTTL > 0 {
		return s.ResetTTL
	}
	return DefaultResetTTL
}

// queueMail puts an account e-mail on the queue. The request answers
// without waiting for the mail server: a worker sends it (Mailer).
func (s *Service) queueMail(ctx context.Context, kind, userID, to string, extra ...string) error {
	job := map[string]string{jobKind: kind, jobUser: userID, jobTo: to}
	for i := 0; i+1 < len(extra); i += 2 {
		job[extra[i]] = extra[i+1]
	}
	return s.Mail.QueueMail(ctx, job)
}

// checkPassword verifies userID's password, as login does (the prepared
// form, and the form as typed for hashes made before passwords were
// prepared), after spending one of the account's password checks.
func (s *Service) checkPassword(ctx context.Context, u *social.User, password string) error {
	if err := s.allow(ctx, RulePasswordUser, u.ID); err != nil {
		return err
	}
	if len(password) > MaxPasswordLen {
		return errWrongPassword
	}
	_, hash, err := s.Accounts.Credentials(ctx, u.Name)
	if err != nil {
		return fmt.Errorf("load credentials: %w", err)
	}
	prepared, perr := preparePassword(password)
	if perr != nil {
		prepared = password
	}
	if s.Passwords.Verify(prepared, hash) || (prepared != password && s.Passwords.Verify(password, hash)) {
		return nil
	}
	return errWrongPassword
}

// newPasswordHash checks and hashes a new password.
func (s *Service) newPasswordHash(password string) (string, error) {
	password, err := preparePassword(password)
	if err != nil {
		return "", err
	}
	if err := validatePassword(password); err != nil {
		return "", err
	}
	return s.Passwords.Hash(password)
}

// ChangePassword sets the viewer's password when current is right, ends
// every other session of the account (their websockets too) and returns a
// fresh pair, in a new session. The session the request came with is
// retired: its refresh token stops working, so a copy of it is worth
// nothing, while its access token and open websockets run until that
// token expires, as they would have.
func (s *Service) ChangePassword(ctx context.Context, v social.Viewer, current, next string) (*Result, error) {
	u, err := s.Accounts.User(ctx, v.UserID)
	if err != nil {
		return nil, err
	}
	hash, err := s.newPasswordHash(next)
	if err != nil {
		return nil, err
	}
	if err := s.checkPassword(ctx, u, current); err != nil {
		return nil, err
	}
	if err := s.Mail.SetPassword(ctx, u.ID, hash); err != nil {
		return nil, err
	}
	if err := s.EndSessions.RevokeUserSessions(ctx, u.ID, v.Session); err != nil {
		return nil, fmt.Errorf("end other sessions: %w", err)
	}
	if v.Session != "" {
		if err := s.EndSessions.RetireSession(ctx, v.Session, v.ExpiresAt.Add(Leeway).Sub(s.now())); err != nil {
			return nil, err
		}
	}
	return s.StartSession(ctx, u)
}

// restartSessions ends every session of u and opens a new one.
func (s *Service) restartSessions(ctx context.Context, u *social.User) (*Result, error) {
	if err := s.EndSessions.RevokeUserSessions(ctx, u.ID, ""); err != nil {
		return nil, fmt.Errorf("end sessions: %w", err)
	}
	return s.StartSession(ctx, u)
}

// RequestPasswordReset queues a reset e-mail to email and answers true,
// whether or not an account has the address: the request does the same
// work either way (a check of the address's form, two rate-limit budgets
// and one queued job), and the worker finds out whether there is an
// account to mail.
func (s *Service) RequestPasswordReset(ctx context.Context, email string) (bool, error) {
	email = normalizeLogin(email)
	if err := social.ValidateEmail(email); err != nil {
		return false, err
	}
	if err := s.allow(ctx, RuleResetIP, clientaddr.From(ctx)); err != nil {
		return false, err
	}
	if err := s.allow(ctx, RuleResetAddress, strings.ToLower(email)); err != nil {
		return false, err
	}
	if err := s.queueMail(ctx, MailReset, "", email); err != nil {
		return false, err
	}
	return true, nil
}

// ResetPassword sets a new password with a reset token (spent by it),
// ends every session of the account and opens a new one.
func (s *Service) ResetPassword(ctx context.Context, token, password string) (*Result, error) {
	if err := s.allow(ctx, RuleResetIP, clientaddr.From(ctx)); err != nil {
		return nil, err
	}
	uid, ok := parseMailToken(social.TokenReset, token)
	if !ok {
		return nil, errBadMailToken
	}
	hash, err := s.newPasswordHash(password)
	if err != nil {
		return nil, err
	}
	ok, err = s.Mail.ResetPassword(ctx, uid, hashToken(token), hash, s.now())
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, errBadMailToken
	}
	u, err := s.Accounts.User(ctx, uid)
	if err != nil {
		return nil, err
	}
	return s.restartSessions(ctx, u)
}
