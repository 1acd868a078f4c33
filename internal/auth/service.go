// Package auth registers and logs in accounts, issues and verifies JWT
// access tokens, rotates refresh tokens, revokes both, and puts the viewer
// of an HTTP or WebSocket request into its context.
package auth

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"golang.org/x/text/secure/precis"
	"golang.org/x/text/unicode/norm"

	"github.com/socialgw/gateway/internal/clientaddr"
	"github.com/socialgw/gateway/internal/reqlog"
	"github.com/socialgw/gateway/internal/social"
)

// Limiter spends one attempt of a rate-limit rule's budget for a subject
// (an address, an account), or answers RATE_LIMITED.
type Limiter interface {
	Allow(ctx context.Context, rule, subject string) error
}

// Rate-limit rules the service applies (see internal/ratelimit).
const (
	RuleLoginIP      = "login-ip"
	RuleLoginAccount = "login-account"
	RuleRegisterIP   = "register-ip"
	RuleRegisterName = "register-name"
)

// Service implements accounts and sessions.
type Service struct {
	Accounts   social.AccountStore
	Sessions   social.SessionStore
	Tokens     *Tokens
	Passwords  *Passwords
	RefreshTTL time.Duration
	// RefreshGrace is how long a rotated refresh token still yields its
	// successor (two tabs refreshing at once, a retried request) before
	// presenting it again revokes the session.
	RefreshGrace time.Duration
	// Limits throttles logins and registrations; nil means unlimited.
	Limits Limiter

	// Mail keeps e-mail tokens and queues account e-mails (mail.go);
	// EndSessions ends a user's sessions. ResetTTL is how long a reset
	// token works (DefaultResetTTL when 0); RequireVerified refuses
	// posting until the account's address is confirmed (CanPost).
	Mail            MailStore
	EndSessions     SessionEnder
	ResetTTL        time.Duration
	RequireVerified bool
	// Deleter deletes accounts (deleteAccount, delete.go).
	Deleter AccountDeleter
}

// Result is what register, login and refresh return.
type Result struct {
	AccessToken  string
	ExpiresAt    time.Time
	RefreshToken string
	User         *social.User
}

// Input limits of accounts.
const (
	MinPasswordLen = 8
	MaxPasswordLen = 128
)

func validatePassword(pw string) error {
	if len(pw) < MinPasswordLen || len(pw) > MaxPasswordLen {
		return social.Errorf(social.BadUserInput, "password must be %d to %d bytes", MinPasswordLen, MaxPasswordLen)
	}
	return nil
}

// preparePassword is a password as it is hashed and checked: PRECIS's
// OpaqueString profile (RFC 8265), so "é" typed precomposed or as e and a
// combining accent, or a non-ASCII space, is one password.
func preparePassword(pw string) (string, error) {
	p, err := precis.OpaqueString.String(pw)
	if err != nil {
		return "", social.Errorf(social.BadUserInput, "password holds characters a password may not (controls)")
	}
	return p, nil
}

// allow spends one attempt of rule for subject before any hashing, so a
// flood of guesses is refused cheaply and does not hold the hashing slots
// that every other login waits for.
func (s *Service) allow(ctx context.Context, rule, subject string) error {
	if s.Limits == nil {
		return nil
	}
	return s.Limits.Allow(ctx, rule, subject)
}

// Register creates an account and opens a session for it.
func (s *Service) Register(ctx context.Context, name, email, password string) (*Result, error) {
	email = normalizeLogin(email)
	if err := social.ValidateName(name); err != nil {
		return nil, err
	}
	if err := social.ValidateEmail(email); err != nil {
		return nil, err
	}
	password, err := preparePassword(password)
	if err != nil {
		return nil, err
	}
	if err := validatePassword(password); err != nil {
		return nil, err
	}
	if err := s.allow(ctx, RuleRegisterIP, clientaddr.From(ctx)); err != nil {
		return nil, err
	}
	if err := s.allow(ctx, RuleRegisterName, strings.ToLower(name)); err != nil {
		return nil, err
	}
	hash, err := s.Passwords.Hash(password)
	if err != nil {
		return nil, err
	}
	u, err := s.Accounts.CreateUser(ctx, social.NewAccount{Name: name, Email: email, PasswordHash: hash})
	if err != nil {
		return nil, err
	}
	s.sendWelcome(ctx, u)
	return s.StartSession(ctx, u)
}

// normalizeLogin trims a name or e-mail address and puts it in Unicode
// normalization form KC: "José" typed with a combining accent and with a
// precomposed é are one address, and so are a full-width "ａlice" and
// "alice", which look alike and would otherwise be two accounts
// (uniqueness is case-insensitive on top of that, in the store).
func normalizeLogin(s string) string { return norm.NFKC.String(strings.TrimSpace(s)) }

// errBadLogin is the one answer to an unknown login and a wrong password.
var errBadLogin = social.Errorf(social.Unauthenticated, "invalid login or password")

// Login checks a name or e-mail and a password and opens a session.
func (s *Service) Login(ctx context.Context, login, password string) (*Result, error) {
	if err := s.allow(ctx, RuleLoginIP, clientaddr.From(ctx)); err != nil {
		return nil, err
	}
	if len(password) > MaxPasswordLen || len(login) > social.MaxEmailLen {
		return nil, errBadLogin
	}
	login = normalizeLogin(login)
	id, hash, err := s.Accounts.Credentials(ctx, login)
	known := err == nil
	if err != nil && !social.IsCode(err, social.NotFound) {
		return nil, err
	}
	// One budget per login as typed (normalized), whether an account
	// answers to it or not: a budget shared by an account's name and
	// e-mail address would tell who holds which address (ten failures
	// for "bob", then "bob@example.com" refused where other addresses are
	// not), and one for unknown logins alone would tell which exist.
	if err := s.allow(ctx, RuleLoginAccount, "l:"+strings.ToLower(login)); err != nil {
		return nil, err
	}
	// Accounts registered before passwords were prepared hold the hash
	// of the password as typed: when the two differ, both are tried (and
	// an unknown login pays the same two derivations).
	prepared, perr := preparePassword(password)
	if perr != nil {
		prepared = password
	}
	both := prepared != password
	if !known {
		s.Passwords.VerifyDummy(prepared)
		if both {
			s.Passwords.VerifyDummy(password)
		}
		return nil, errBadLogin
	}
	if !s.Passwords.Verify(prepared, hash) && (!both || !s.Passwords.Verify(password, hash)) {
		return nil, errBadLogin
	}
	u, err := s.Accounts.User(ctx, id)
	if err != nil {
		return nil, err
	}
	if u.Suspended {
		// Said only to the holder of the password.
		return nil, social.ErrSuspended
	}
	return s.StartSession(ctx, u)
}

// StartSession opens a refresh-token family for an authenticated user and
// issues its first token pair.
func (s *Service) StartSession(ctx context.Context, u *social.User) (*Result, error) {
	family := randomID(16)
	refresh := family + "." + randomID(32)
	sid := sessionID(family)
	if err := s.Sessions.CreateSession(ctx, sid, u.ID, hashToken(refresh), randomID(32), s.RefreshTTL); err != nil {
		return nil, fmt.Errorf("create session: %w", err)
	}
	return s.issue(u, sid, refresh)
}

// sessionID names the session of a refresh-token family: in the store,
// and in the access tokens (sid) that logout uses to revoke it. It is a
// hash of the family, so an access token, which travels further than a
// refresh token (logs, proxies, third parties), does not hold the
// family: with it one could forge "family.anything", have it taken for
// a reused token, and so end the session (and raise a false theft
// warning).
func sessionID(family string) string {
	sum := sha256.Sum256([]byte("session\x00" + family))
	return "s" + hex.EncodeToString(sum[:16])
}

// isSessionID reports whether x has the form sessionID gives.
func isSessionID(x string) bool {
	if len(x) != 33 || x[0] != 's' {
		return false
	}
	_, err := hex.DecodeString(x[1:])
	return err == nil
}

// SessionOf is the session a refresh token belongs to, as access tokens
// and the session store name it.
func SessionOf(refresh string) string {
	family, _, _ := strings.Cut(refresh, ".")
	return sessionID(family)
}

func (s *Service) issue(u *social.User, sid, refresh string) (*Result, error) {
	access, claims, err := s.Tokens.Issue(u.ID, sid)
	if err != nil {
		return nil, err
	}
	return &Result{AccessToken: access, ExpiresAt: claims.ExpiresAt.Time, RefreshToken: refresh, User: u}, nil
}

var errBadRefresh = social.Errorf(social.Unauthenticated, "invalid or expired refresh token")

// Refresh rotates a refresh token: the old one stops working, and using it
// again after the grace window revokes the whole family. A secret the
// family never issued is refused and revokes nothing. Within the window
// the old token yields the same successor again, because the successor is
// derived from it with the family's secret key (an HMAC): two tabs that
// refresh at once both stay logged in, and no token is added to the
// family. Redis holds only hashes of tokens and the key, so a copy of
// Redis alone does not yield a usable token.
func (s *Service) Refresh(ctx context.Context, refresh string) (*Result, error) {
	family, _, ok := strings.Cut(refresh, ".")
	if !ok || family == "" || len(refresh) > 256 {
		return nil, errBadRefresh
	}
	sid := sessionID(family)
	key, err := s.Sessions.SessionKey(ctx, sid)
	if social.IsCode(err, social.Unauthenticated) && !isSessionID(family) {
		// A session opened before sessions were named by a hash is
		// stored under its family, and its access tokens carry that.
		// (Never for a family shaped like a session id: that is an
		// access token's sid passed off as a family.)
		sid = family
		key, err = s.Sessions.SessionKey(ctx, sid)
	}
	if err != nil {
		return nil, err
	}
	next := family + "." + successor(key, refresh)
	uid, err := s.Sessions.RotateSession(ctx, sid, hashToken(refresh), hashToken(next), s.RefreshGrace, s.RefreshTTL)
	if errors.Is(err, social.ErrRefreshReused) {
		// A stolen token, or a client that lost its newest one: either
		// way operators want to see it.
		reqlog.Logger(ctx).Warn("refresh token reused: session revoked", "session", sid, "client", clientaddr.From(ctx))
	}
	if err != nil {
		return nil, err
	}
	u, err := s.Accounts.User(ctx, uid)
	if social.IsCode(err, social.NotFound) || (err == nil && u.Suspended) {
		// The session outlived its user, or its suspension: end it
		// rather than answer for an account that is gone or suspended.
		if err := s.Sessions.RevokeSession(ctx, sid); err != nil {
			return nil, fmt.Errorf("revoke session of a missing user: %w", err)
		}
		return nil, errBadRefresh
	}
	if err != nil {
		return nil, err
	}
	return s.issue(u, sid, next)
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
	// A token outlives its user when the account is deleted or its data is
	// lost: it must not write posts with no author or edges to nobody.
	revoked, err := s.Sessions.Revoked(ctx, c.ID, c.SessionID, c.Subject)
	if err != nil {
		return social.Viewer{}, fmt.Errorf("check token revocation: %w", err)
	}
	if revoked {
		return social.Viewer{}, errBadToken
	}
	return social.Viewer{UserID: c.Subject, TokenID: c.ID, Session: c.SessionID, ExpiresAt: c.ExpiresAt.Time}, nil
}

// successor returns the secret part of the token that follows refresh in
// its family: HMAC-SHA256 under the family's key, or random for a family
// stored before keys existed (no grace window for those).
func successor(key, refresh string) string {
	if key == "" {
		return randomID(32)
	}
	m := hmac.New(sha256.New, []byte(key))
	m.Write([]byte(refresh))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// hashToken is how refresh tokens are stored: a stolen dump of Redis does
// not hold usable tokens.
func hashToken(t string) string {
	sum := sha256.Sum256([]byte(t))
	return hex.EncodeToString(sum[:])
}
