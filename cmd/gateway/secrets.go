package main

import (
	"fmt"
	"math"

	"github.com/socialgw/gateway/internal/auth"
)

// Thresholds of weakSecret. A random secret clears them by far: in
// 200 000 draws of `openssl rand -hex 16` (32 characters of 16 kinds)
// the fewest distinct bytes seen was 8 and the lowest estimate 88 bits.
const (
	minSecretDistinct = 8
	minSecretBits     = 64
)

// weakSecret says why secret, the value of the variable name, is unfit to
// sign with ("" when it is fit): shorter than auth.MinSecretLen, fewer
// than minSecretDistinct distinct bytes, one shorter string repeated, or
// under minSecretBits by its bytes' frequencies. It cannot tell a
// guessable phrase from a random one; it refuses what is plainly not
// random ("aaaa…", "secretsecret…", a counter).
func weakSecret(name, secret string) string {
	n := len(secret)
	if n < auth.MinSecretLen {
		return fmt.Sprintf("%s must be at least %d bytes (it has %d)", name, auth.MinSecretLen, n)
	}
	counts := map[byte]int{}
	for i := range n {
		counts[secret[i]]++
	}
	if len(counts) < minSecretDistinct {
		return fmt.Sprintf("%s has %d distinct bytes, fewer than %d: it is not random", name, len(counts), minSecretDistinct)
	}
	if p := period(secret); p > 0 {
		return fmt.Sprintf("%s repeats a pattern of %d bytes: it is not random", name, p)
	}
	bits := 0.0
	for _, c := range counts {
		p := float64(c) / float64(n)
		bits -= float64(c) * math.Log2(p)
	}
	if bits < minSecretBits {
		return fmt.Sprintf("%s holds about %.0f bits by its bytes' frequencies, fewer than %d: it is not random", name, bits, minSecretBits)
	}
	return ""
}

// period is the shortest p of at most half of s's length such that s is
// a string of p bytes repeated (the last repeat may be cut short), or 0.
func period(s string) int {
	for p := 1; p <= len(s)/2; p++ {
		if s[p:] == s[:len(s)-p] {
			return p
		}
	}
	return 0
}

// secretAdvice is how to make a secret, for the errors that refuse one.
const secretAdvice = "make one with: openssl rand -hex 32"
