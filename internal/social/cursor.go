package social

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"strings"
	"sync/atomic"
)

// Cursors are opaque to clients: a position (a post id, a score and a
// member) sealed with AES-256-GCM under a key derived from the server key
// every gateway shares (SetCursorKey), so a client can neither read what
// a cursor points at nor make one up. The nonce is synthetic, an HMAC of
// the position under a second derived key: one position always gives one
// cursor (golden responses stay stable, a page's cursors can be compared),
// and distinct positions never share a nonce. What a client can learn is
// only whether two cursors are equal.
//
// A cursor of the earlier, unsealed form (base64url of "v1:" and the
// parts) is still read as its position: it holds nothing the client did
// not have, and clients paging across a deployment go on where they were.

// cursorSealed is the first byte of a sealed cursor: never 'v', so a
// sealed cursor is never taken for an unsealed one.
const cursorSealed = 0x02

// cursorPrefix is the head of an unsealed cursor.
const cursorPrefix = "v1:"

type cursorCodec struct {
	aead  cipher.AEAD
	nonce []byte // HMAC key of the synthetic nonces
}

var cursorKeys atomic.Pointer[cursorCodec]

func init() {
	// Until SetCursorKey: a key of this process alone, as MEDIA_SIGNING_KEY
	// is when unset.
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		panic("crypto/rand failed: " + err.Error()) // never happens on supported platforms
	}
	SetCursorKey(key)
}

// SetCursorKey derives the cursor keys from the server key shared by all
// gateways (HKDF-SHA256, with labels of their own, so the cursor keys say
// nothing of the server key or of its other uses). Call it once at start,
// before serving: cursors sealed under an earlier key stop decoding.
func SetCursorKey(server []byte) {
	enc, err := hkdf.Key(sha256.New, server, nil, "socialgw cursor seal", 32)
	if err != nil {
		panic("derive cursor key: " + err.Error()) // only for lengths HKDF cannot give
	}
	nonce, err := hkdf.Key(sha256.New, server, nil, "socialgw cursor nonce", 32)
	if err != nil {
		panic("derive cursor nonce key: " + err.Error())
	}
	block, err := aes.NewCipher(enc)
	if err != nil {
		panic("cursor cipher: " + err.Error()) // a 32-byte key always makes one
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic("cursor cipher: " + err.Error())
	}
	cursorKeys.Store(&cursorCodec{aead: aead, nonce: nonce})
}

// EncodeCursor turns the position parts of a list into an opaque cursor.
func EncodeCursor(parts ...string) string {
	c := cursorKeys.Load()
	plain := []byte(strings.Join(parts, ":"))
	m := hmac.New(sha256.New, c.nonce)
	m.Write(plain)
	nonce := m.Sum(nil)[:c.aead.NonceSize()]
	out := make([]byte, 1, 1+len(nonce)+len(plain)+c.aead.Overhead())
	out[0] = cursorSealed
	out = append(out, nonce...)
	out = c.aead.Seal(out, nonce, plain, out[:1])
	return base64.RawURLEncoding.EncodeToString(out)
}

// DecodeCursor returns the n parts of a cursor made by EncodeCursor (or
// of the unsealed form), or a BAD_USER_INPUT error for anything else: a
// cursor altered in any bit, sealed under another key, or with other than
// n non-empty parts.
func DecodeCursor(c string, n int) ([]string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return nil, errBadCursor
	}
	var plain string
	switch {
	case len(b) > 0 && b[0] == cursorSealed:
		k := cursorKeys.Load()
		ns := k.aead.NonceSize()
		if len(b) < 1+ns+k.aead.Overhead() {
			return nil, errBadCursor
		}
		p, err := k.aead.Open(nil, b[1:1+ns], b[1+ns:], b[:1])
		if err != nil {
			return nil, errBadCursor
		}
		plain = string(p)
	case strings.HasPrefix(string(b), cursorPrefix):
		plain = string(b[len(cursorPrefix):])
	default:
		return nil, errBadCursor
	}
	parts := strings.Split(plain, ":")
	if len(parts) != n {
		return nil, errBadCursor
	}
	for _, p := range parts {
		if p == "" {
			return nil, errBadCursor
		}
	}
	return parts, nil
}

var errBadCursor = Errorf(BadUserInput, "malformed cursor")
