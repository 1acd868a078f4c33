package social

import (
	"context"
	"time"
)

// The stores that accounts and sessions (internal/auth) are kept in; the
// Redis adapter implements them.

// NewAccount is what the account store needs to create an account.
type NewAccount struct {
	Name, Email, PasswordHash string
}

// AccountStore keeps accounts.
type AccountStore interface {
	CreateUser(ctx context.Context, in NewAccount) (*User, error)
	// Credentials returns the id and password hash for a name or e-mail.
	Credentials(ctx context.Context, login string) (id, passwordHash string, err error)
	User(ctx context.Context, id string) (*User, error)
}

// SessionStore keeps refresh-token families and the access-token denylist.
type SessionStore interface {
	// CreateSession stores a family: its user, its current token's hash
	// and the secret key its successor tokens are derived with.
	CreateSession(ctx context.Context, family, userID, tokenHash, key string, ttl time.Duration) error
	// SessionKey returns the family's successor key ("" for a family
	// stored without one), or UNAUTHENTICATED when the family is gone.
	SessionKey(ctx context.Context, family string) (string, error)
	// RotateSession atomically replaces the family's current token hash
	// old with new and returns the family's user. The previous token
	// presented again within grace, with the same new hash, answers the
	// same without changing anything. A token the family issued earlier
	// (the previous one after grace, or an older generation the store
	// remembers) revokes the family: ErrRefreshReused. Any other secret
	// is UNAUTHENTICATED and changes nothing, so knowing a family's name
	// is not enough to end its session.
	RotateSession(ctx context.Context, family, oldHash, newHash string, grace, ttl time.Duration) (userID string, err error)
	RevokeSession(ctx context.Context, family string) error
	DenyToken(ctx context.Context, jti string, until time.Time) error
	// Revoked reports whether the access token jti was denied, its
	// session family no longer exists, or its user no longer exists or is
	// suspended.
	Revoked(ctx context.Context, jti, family, userID string) (bool, error)
}

// ErrRefreshReused is the answer to a rotated refresh token presented
// again after the grace window: the session store has revoked its family.
var ErrRefreshReused = Errorf(Unauthenticated,
	"this refresh token was already used, so the session was revoked: log in again")
