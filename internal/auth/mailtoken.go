package auth

import (
	"crypto/subtle"
	"strings"

	"github.com/socialgw/gateway/internal/social"
)

// E-mail tokens read "<purpose letter><user id>.<secret>": "v12.…"
// confirms an address of user 12, "r12.…" resets its password. The user
// id finds the one pending token of that purpose in the user's own slot;
// the secret is 32 random bytes, so a token cannot be guessed, and the
// store keeps only its SHA-256 (hashToken), so a copy of Redis yields no
// usable token.
const (
	verifyLetter = "v"
	resetLetter  = "r"
)

// maxMailToken bounds what is parsed: a user id and 43 characters.
const maxMailToken = 96

// newMailToken returns a fresh token of a purpose for userID and its hash.
func newMailToken(purpose, userID string) (token, hash string) {
	token = letterOf(purpose) + userID + "." + randomID(32)
	return token, hashToken(token)
}

func letterOf(purpose string) string {
	if purpose == social.TokenReset {
		return resetLetter
	}
	return verifyLetter
}

// parseMailToken returns the user a token of purpose names; false for
// anything not shaped like one.
func parseMailToken(purpose, token string) (userID string, ok bool) {
	if len(token) > maxMailToken {
		return "", false
	}
	rest, ok := strings.CutPrefix(token, letterOf(purpose))
	if !ok {
		return "", false
	}
	id, secret, ok := strings.Cut(rest, ".")
	if !ok || !social.IsID(id) || len(secret) < 40 {
		return "", false
	}
	return id, true
}

// sameHash compares two token hashes in constant time.
func sameHash(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
