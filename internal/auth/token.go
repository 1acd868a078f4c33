package auth

import (
	"crypto"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// TokenOptions configure access tokens. Method is HS256 (Secret), EdDSA or
// RS256 (PEM keys).
type TokenOptions struct {
	Method        string
	Secret        []byte
	PrivateKeyPEM []byte
	PublicKeyPEM  []byte
	Issuer        string
	Audience      string
	TTL           time.Duration
	// Now is the clock tokens are issued and verified with; nil is
	// time.Now. Tests move it to pass an expiry.
	Now func() time.Time
}

// Leeway is the clock skew tolerated on exp, nbf and iat.
const Leeway = 30 * time.Second

// MinSecretLen is the shortest HS256 secret accepted.
const MinSecretLen = 32

// Tokens issues and verifies JWT access tokens.
type Tokens struct {
	method    jwt.SigningMethod
	signKey   any
	verifyKey any
	issuer    string
	audience  string
	ttl       time.Duration
	parser    *jwt.Parser
	validator *jwt.Validator
	now       func() time.Time
	verified  verifiedTokens
}

// Claims are the claims of an access token: the registered ones plus the
// refresh-token family (sid) that logout revokes together with the token.
type Claims struct {
	jwt.RegisteredClaims
	SessionID string `json:"sid,omitempty"`
}

// NewTokens checks the options and returns a Tokens.
func NewTokens(o TokenOptions) (*Tokens, error) {
	t := &Tokens{issuer: o.Issuer, audience: o.Audience, ttl: o.TTL, now: o.Now}
	if t.now == nil {
		t.now = time.Now
	}
	if t.ttl <= 0 {
		return nil, errors.New("token lifetime must be positive")
	}
	if o.Issuer == "" || o.Audience == "" {
		return nil, errors.New("token issuer and audience must be set")
	}
	switch o.Method {
	case "", "HS256":
		if len(o.Secret) < MinSecretLen {
			return nil, fmt.Errorf("HS256 secret must be at least %d bytes", MinSecretLen)
		}
		t.method, t.signKey, t.verifyKey = jwt.SigningMethodHS256, o.Secret, o.Secret
	case "EdDSA":
		priv, err := jwt.ParseEdPrivateKeyFromPEM(o.PrivateKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("parse EdDSA private key: %w", err)
		}
		pub, err := jwt.ParseEdPublicKeyFromPEM(o.PublicKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("parse EdDSA public key: %w", err)
		}
		t.method, t.signKey, t.verifyKey = jwt.SigningMethodEdDSA, priv.(crypto.Signer), pub
	case "RS256":
		priv, err := jwt.ParseRSAPrivateKeyFromPEM(o.PrivateKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("parse RS256 private key: %w", err)
		}
		pub, err := jwt.ParseRSAPublicKeyFromPEM(o.PublicKeyPEM)
		if err != nil {
			return nil, fmt.Errorf("parse RS256 public key: %w", err)
		}
		t.method, t.signKey, t.verifyKey = jwt.SigningMethodRS256, priv, pub
	default:
		return nil, fmt.Errorf("unsupported token method %q (HS256, EdDSA or RS256)", o.Method)
	}
	// The parser pins the one algorithm in use, so neither "none" nor a
	// token signed with a public key as an HMAC secret gets through.
	claimRules := []jwt.ParserOption{
		jwt.WithExpirationRequired(),
		jwt.WithIssuedAt(),
		jwt.WithIssuer(o.Issuer),
		jwt.WithAudience(o.Audience),
		jwt.WithLeeway(Leeway),
		jwt.WithTimeFunc(func() time.Time { return t.now() }),
	}
	t.parser = jwt.NewParser(append(claimRules, jwt.WithValidMethods([]string{t.method.Alg()}), jwt.WithStrictDecoding())...)
	t.validator = jwt.NewValidator(claimRules...)
	t.verified.m = map[string]*Claims{}
	return t, nil
}

// Issue signs an access token for a user in a session (refresh family).
func (t *Tokens) Issue(userID, session string) (token string, claims Claims, err error) {
	now := t.now()
	claims = Claims{
		RegisteredClaims: jwt.RegisteredClaims{
			Subject:   userID,
			Issuer:    t.issuer,
			Audience:  jwt.ClaimStrings{t.audience},
			IssuedAt:  jwt.NewNumericDate(now),
			ExpiresAt: jwt.NewNumericDate(now.Add(t.ttl)),
			ID:        randomID(16),
		},
		SessionID: session,
	}
	token, err = jwt.NewWithClaims(t.method, claims).SignedString(t.signKey)
	if err != nil {
		return "", Claims{}, fmt.Errorf("sign access token: %w", err)
	}
	return token, claims, nil
}

// Parse verifies a token's signature and claims. Only the canonical
// encoding is accepted, so a signed token has exactly one spelling: base64
// decoding alone would skip newlines and ignore the spare bits of the
// signature's last character.
//
// A token verified before is not decoded and its signature not checked
// again (verifiedTokens): only its claims are validated against the clock
// once more, as the parser validates them.
func (t *Tokens) Parse(token string) (*Claims, error) {
	if c := t.verified.get(token); c != nil {
		if err := t.validator.Validate(c); err != nil {
			return nil, fmt.Errorf("%w: %w", jwt.ErrTokenInvalidClaims, err) // as the parser wraps it
		}
		return c.clone(), nil
	}
	if strings.IndexFunc(token, notCompact) >= 0 {
		return nil, errors.New("token is not in compact base64url form")
	}
	var c Claims
	_, err := t.parser.ParseWithClaims(token, &c, func(*jwt.Token) (any, error) { return t.verifyKey, nil })
	if err != nil {
		return nil, err
	}
	if c.Subject == "" || c.ID == "" {
		return nil, errors.New("token lacks sub or jti")
	}
	t.verified.add(token, c.clone())
	return &c, nil
}

// clone is a deep copy: the remembered claims stay as verified whatever a
// caller does with the copy it got (the dates are pointers, the audience a
// slice).
func (c *Claims) clone() *Claims {
	cc := *c
	for _, d := range []**jwt.NumericDate{&cc.ExpiresAt, &cc.IssuedAt, &cc.NotBefore} {
		if *d != nil {
			v := **d
			*d = &v
		}
	}
	cc.Audience = slices.Clone(c.Audience)
	return &cc
}

// verifiedTokens remembers the claims of tokens whose signature checked:
// a client sends the same access token with every request for its whole
// lifetime, and decoding and verifying it again cost 2 % of the CPU of a
// timeline page at saturation (docs/performance.md). A token's text
// determines its claims, so the text is the key; only tokens that verified
// are kept, so a client cannot fill the cache with forgeries, and it is
// bounded in entries and in the length of the tokens it keeps. Revocation
// is not cached: it is checked in Redis on every request.
type verifiedTokens struct {
	mu sync.Mutex
	m  map[string]*Claims
}

const (
	maxVerifiedTokens   = 10000
	maxVerifiedTokenLen = 2048
)

func (v *verifiedTokens) get(token string) *Claims {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.m[token]
}

func (v *verifiedTokens) add(token string, c *Claims) {
	if len(token) > maxVerifiedTokenLen {
		return
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	if len(v.m) >= maxVerifiedTokens {
		// Full: evict an arbitrary tenth (map order is random), expired
		// tokens among them in proportion.
		n := 0
		for k := range v.m {
			delete(v.m, k)
			if n++; n >= maxVerifiedTokens/10 {
				break
			}
		}
	}
	v.m[token] = c
}

// notCompact reports a rune outside the alphabet of a compact JWT.
func notCompact(r rune) bool {
	return !('A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '_' || r == '.')
}

// randomID returns n random bytes, base64url encoded.
func randomID(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	return base64.RawURLEncoding.EncodeToString(b)
}
