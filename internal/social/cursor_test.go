package social_test

import (
	"encoding/base64"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/social"
)

// TestCursorSealed: a cursor names no position a client can read, decodes
// to its parts, is the same for the same position, and any change to it
// (a bit, a cut, another key) is BAD_USER_INPUT. A cursor of the unsealed
// form still decodes to its position.
func TestCursorSealed(t *testing.T) {
	c := social.EncodeCursor("873")
	if c != social.EncodeCursor("873") {
		t.Error("one position gave two cursors")
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "873") || strings.Contains(c, base64.RawURLEncoding.EncodeToString([]byte("873"))) {
		t.Fatalf("cursor %q shows its position", c)
	}
	if parts, err := social.DecodeCursor(c, 1); err != nil || parts[0] != "873" {
		t.Fatalf("DecodeCursor = %q, %v", parts, err)
	}
	if parts, err := social.DecodeCursor(social.EncodeCursor("1700000000000", "42"), 2); err != nil || parts[0] != "1700000000000" || parts[1] != "42" {
		t.Fatalf("two parts: %q, %v", parts, err)
	}
	legacy := base64.RawURLEncoding.EncodeToString([]byte("v1:873"))
	if parts, err := social.DecodeCursor(legacy, 1); err != nil || parts[0] != "873" {
		t.Fatalf("unsealed cursor: %q, %v", parts, err)
	}

	flip := func(i int) string {
		b := append([]byte(nil), raw...)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	bad := map[string]string{
		"version byte":     flip(0),
		"nonce":            flip(1),
		"sealed position":  flip(14),
		"tag":              flip(len(raw) - 1),
		"cut":              base64.RawURLEncoding.EncodeToString(raw[:len(raw)-1]),
		"no tag":           base64.RawURLEncoding.EncodeToString(raw[:13]),
		"another position": c[:len(c)-2] + social.EncodeCursor("874")[len(c)-2:],
		"empty":            "",
		"not base64":       c + "!",
		"parts of another": social.EncodeCursor("1", "2"),
	}
	for name, cur := range bad {
		if cur == c {
			continue
		}
		if parts, err := social.DecodeCursor(cur, 1); social.ErrorCode(err) != social.BadUserInput {
			t.Errorf("%s: DecodeCursor = %q, %v; want BAD_USER_INPUT", name, parts, err)
		}
	}
	t.Run("another key", func(t *testing.T) {
		defer social.SetCursorKey([]byte(strings.Repeat("k", 32)))
		social.SetCursorKey([]byte(strings.Repeat("o", 32)))
		if _, err := social.DecodeCursor(c, 1); social.ErrorCode(err) != social.BadUserInput {
			t.Errorf("a cursor sealed under another key: %v, want BAD_USER_INPUT", err)
		}
	})
}
