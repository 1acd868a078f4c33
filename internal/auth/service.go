// Package auth registers and logs in accounts, issues and verifies JWT
// access tokens, rotates refresh tokens, revokes both, and puts the viewer
// of an HTTP or WebSocket request into its context.
package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/mail"
	"regexp"
	"strings"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/socialgw/gateway/internal/social"
)

// NewAccount is what the account store needs to create an account.
type NewAccount struct {
	Name, Email, PasswordHash string
}

// AccountStore keeps accounts.
type AccountStore interface {
	CreateUser(ctx context.Context, in NewAccount) (*social.User, error)
	// Credentials returns the id and password hash for a name or e-mail.
	Credentials(ctx context.Context, login string) (id, passwordHash string, err error)
	User(ctx context.Context, id string) (*social.User, error)
}

// SessionStore keeps refresh-token families and the access-token denylist.
type SessionStore interface {
	CreateSession(ctx context.Context, family, userID, tokenHash string, ttl time.Duration) error
	// RotateSession replaces the family's current token hash old with new
	// and returns the family's user. Presenting any other token of the
	// family revokes the family (UNAUTHENTICATED).
	RotateSession(ctx context.Context, family, oldHash, newHash string, ttl time.Duration) (userID string, err error)
	RevokeSession(ctx context.Context, family string) error
	DenyToken(ctx context.Context, jti string, until time.Time) error
	// Revoked reports whether the access token jti was denied or its
	// session family no longer exists.
	Revoked(ctx context.Context, jti, family string) (bool, error)
}

// Service implements accounts and sessions.
type Service struct {
	Accounts   AccountStore
	Sessions   SessionStore
	Tokens     *Tokens
	Passwords  *Passwords
	RefreshTTL time.Duration
}

// Result is what register, login and refresh return.
type Result struct {
	AccessToken  string
	ExpiresAt    time.Time
	RefreshToken string
	User         *social.User
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_]{3,30}$`)

// Input limits of accounts.
const (
	MinPasswordLen = 8
	MaxPasswordLen = 128
	maxEmailLen    = 254
)

// ValidateName checks a user name: 3–30 of [A-Za-z0-9_].
func ValidateName(name string) error {
	if !nameRE.MatchString(name) {
		return social.Errorf(social.BadUserInput, "name must be 3 to 30 letters, digits or underscores")
	}
	return nil
}

// ValidateEmail checks a bare e-mail address (no display name).
func ValidateEmail(email string) error {
	a, err := mail.ParseAddress(email)
	at := strings.LastIndexByte(email, '@')
	if err != nil || a.Address != email || len(email) > maxEmailLen || at < 1 || !strings.Contains(email[at:], ".") {
		return social.Errorf(social.BadUserInput, "email is not a valid e-mail address")
	}
	return nil
}

func validatePassword(pw string) error {
	if len(pw) < MinPasswordLen || len(pw) > MaxPasswordLen {
		return social.Errorf(social.BadUserInput, "password must be %d to %d bytes", MinPasswordLen, MaxPasswordLen)
	}
	return nil
}

// Register creates an account and opens a session for it.
func (s *Service) Register(ctx context.Context, name, email, password string) (*Result, error) {
	email = normalizeLogin(email)
	if err := ValidateName(name); err != nil {
		return nil, err
	}
	if err := ValidateEmail(email); err != nil {
		return nil, err
	}
	if err := validatePassword(password); err != nil {
		return nil, err
	}
	hash, err := s.Passwords.Hash(password)
	if err != nil {
		return nil, err
	}
	u, err := s.Accounts.CreateUser(ctx, NewAccount{Name: name, Email: email, PasswordHash: hash})
	if err != nil {
		return nil, err
	}
	return s.StartSession(ctx, u)
}

// errBadLogin is the one answer to an unknown login and a wrong password.
// normalizeLogin trims a name or e-mail address and puts it in Unicode
// normalization form C, so that "José" typed with a combining accent and
// with a precomposed é are one address (uniqueness is case-insensitive on
// top of that, in the store).
func normalizeLogin(s string) string { return norm.NFC.String(strings.TrimSpace(s)) }

var errBadLogin = social.Errorf(social.Unauthenticated, "invalid login or password")

// Login checks a name or e-mail and a password and opens a session.
func (s *Service) Login(ctx context.Context, login, password string) (*Result, error) {
	if len(password) > MaxPasswordLen || len(login) > maxEmailLen {
		return nil, errBadLogin
	}
	id, hash, err := s.Accounts.Credentials(ctx, normalizeLogin(login))
	if social.IsCode(err, social.NotFound) {
		s.Passwords.VerifyDummy(password)
		return nil, errBadLogin
	}
	if err != nil {
		return nil, err
	}
	if !s.Passwords.Verify(password, hash) {
		return nil, errBadLogin
	}
	u, err := s.Accounts.User(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.StartSession(ctx, u)
}

// StartSession opens a refresh-token family for an authenticated user and
// issues its first token pair.
func (s *Service) StartSession(ctx context.Context, u *social.User) (*Result, error) {
	family := randomID(16)
	refresh := family + "." + randomID(32)
	if err := s.Sessions.CreateSession(ctx, family, u.ID, hashToken(refresh), s.RefreshTTL); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	return s.issue(u, family, refresh)
}

func (s *Service) issue(u *social.User, family, refresh string) (*Result, error) {
	access, claims, err := s.Tokens.Issue(u.ID, family)
	if err != nil {
		return nil, err
	}
	return &Result{AccessToken: access, ExpiresAt: claims.ExpiresAt.Time, RefreshToken: refresh, User: u}, nil
}

var errBadRefresh = social.Errorf(social.Unauthenticated, "invalid or expired refresh token")

// Refresh rotates a refresh token: the old one stops working, and using it
// again revokes the whole family.
func (s *Service) Refresh(ctx context.Context, refresh string) (*Result, error) {
	family, _, ok := strings.Cut(refresh, ".")
	if !ok || family == "" || len(refresh) > 256 {
		return nil, errBadRefresh
	}
	next := family + "." + randomID(32)
	uid, err := s.Sessions.RotateSession(ctx, family, hashToken(refresh), hashToken(next), s.RefreshTTL)
	if err != nil {
		return nil, err
	}
	u, err := s.Accounts.User(ctx, uid)
	if err != nil {
		return nil, err
	}
	return s.issue(u, family, next)
}

// Logout revokes the viewer's access token and its refresh family.
func (s *Service) Logout(ctx context.Context, v social.Viewer) error {
	if err := s.Sessions.DenyToken(ctx, v.TokenID, v.ExpiresAt.Add(Leeway)); err != nil {
		return fmt.Errorf("deny access token: %w", err)
	}
	if v.Session != "" {
		if err := s.Sessions.RevokeSession(ctx, v.Session); err != nil {
			return fmt.Errorf("revoke session: %w", err)
		}
	}
	return nil
}

var errBadToken = social.Errorf(social.Unauthenticated, "invalid, expired or revoked access token")

// Authenticate turns a bearer token into the viewer, or UNAUTHENTICATED.
func (s *Service) Authenticate(ctx context.Context, token string) (social.Viewer, error) {
	c, err := s.Tokens.Parse(token)
	if err != nil {
		return social.Viewer{}, errBadToken
	}
	revoked, err := s.Sessions.Revoked(ctx, c.ID, c.SessionID)
	if err != nil {
		return social.Viewer{}, fmt.Errorf("check token revocation: %w", err)
	}
	if revoked {
		return social.Viewer{}, errBadToken
	}
	return social.Viewer{UserID: c.Subject, TokenID: c.ID, Session: c.SessionID, ExpiresAt: c.ExpiresAt.Time}, nil
}

// hashToken is how refresh tokens are stored: a stolen dump of Redis does
// not hold usable tokens.
func hashToken(t string) string {
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}
