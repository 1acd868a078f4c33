package auth

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"

	"golang.org/x/crypto/argon2"
)

// Argon2id parameters: OWASP's recommended minimum (m = 19 MiB, t = 2, p = 1).
const (
	argonMemoryKiB = 19 * 1024
	argonTime      = 2
	argonThreads   = 1
	argonKeyLen    = 32
	argonSaltLen   = 16
)

// Passwords hashes and checks passwords with argon2id. Each hash takes
// 19 MiB, so the number running at once is bounded: a burst of logins
// queues instead of exhausting memory.
type Passwords struct {
	slots   chan struct{}
	dummy   string       // compared against for unknown logins, to equalise latency
	derived atomic.Int64 // derivations run; tests check every login runs exactly one
}

// NewPasswords returns a hasher running at most concurrency hashes at once.
func NewPasswords(concurrency int) *Passwords {
	if concurrency < 1 {
		concurrency = 1
	}
	p := &Passwords{slots: make(chan struct{}, concurrency)}
	p.dummy, _ = p.Hash("dummy password for unknown logins")
	return p
}

// Hash returns the PHC string of an argon2id hash of password.
func (p *Passwords) Hash(password string) (string, error) {
	salt := make([]byte, argonSaltLen)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("read salt: %w", err)
	}
	key := p.derive([]byte(password), salt, argonTime, argonMemoryKiB, argonThreads, argonKeyLen)
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemoryKiB, argonTime, argonThreads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}

// Verify reports whether password matches the PHC string, comparing in
// constant time. The parameters are read from the string, so hashes made
// with older parameters keep working.
func (p *Passwords) Verify(password, phc string) bool {
	time, mem, threads, salt, want, err := parsePHC(phc)
	if err != nil {
		return false
	}
	got := p.derive([]byte(password), salt, time, mem, threads, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1
}

// VerifyDummy spends the time of a real verification; it is used when the
// login is unknown so that both failures look alike from outside.
func (p *Passwords) VerifyDummy(password string) { p.Verify(password, p.dummy) }

func (p *Passwords) derive(pw, salt []byte, t, m uint32, threads uint8, n uint32) []byte {
	p.slots <- struct{}{}
	defer func() { <-p.slots }()
	p.derived.Add(1)
	return argon2.IDKey(pw, salt, t, m, threads, n)
}

var errBadPHC = errors.New("malformed argon2id hash")

// Shortest salt and key accepted in a PHC string: argon2's minimum salt,
// and a key long enough that a wrong password cannot match by chance.
const (
	minSaltLen = 8
	minKeyLen  = 16
)

// parsePHC reads an argon2id PHC string, accepting only its canonical form.
func parsePHC(s string) (t, m uint32, threads uint8, salt, key []byte, err error) {
	parts := strings.Split(s, "$")
	if len(parts) != 6 || parts[0] != "" || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return 0, 0, 0, nil, nil, errBadPHC
	}
	if _, err = fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &threads); err != nil || m == 0 || t == 0 || threads == 0 || m > 1<<20 ||
		parts[3] != fmt.Sprintf("m=%d,t=%d,p=%d", m, t, threads) {
		return 0, 0, 0, nil, nil, errBadPHC
	}
	if salt, err = base64.RawStdEncoding.DecodeString(parts[4]); err != nil || len(salt) < minSaltLen {
		return 0, 0, 0, nil, nil, errBadPHC
	}
	if key, err = base64.RawStdEncoding.DecodeString(parts[5]); err != nil || len(key) < minKeyLen {
		return 0, 0, 0, nil, nil, errBadPHC
	}
	return t, m, threads, salt, key, nil
}
