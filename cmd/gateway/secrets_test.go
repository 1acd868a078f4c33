package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"io"
	"strings"
	"testing"
)

func TestWeakSecret(t *testing.T) {
	random := func(n int, enc func([]byte) string) string {
		b := make([]byte, n)
		_, _ = rand.Read(b)
		return enc(b)
	}
	tests := []struct {
		name, secret string
		want         string // in the reason; "" for a fit secret
	}{
		{"openssl rand -hex 32", random(32, hex.EncodeToString), ""},
		{"openssl rand -hex 16", random(16, hex.EncodeToString), ""},
		{"openssl rand -base64 32", random(32, base64.StdEncoding.EncodeToString), ""},
		{"the tests' secret", testSecret, ""},
		{"short", "0123456789abcdefghijklmnopqrstu", "at least 32 bytes"},
		{"one byte", strings.Repeat("a", 32), "1 distinct bytes"},
		{"two bytes alternating", strings.Repeat("ab", 16), "2 distinct bytes"},
		{"a word repeated, cut short", strings.Repeat("password1", 4)[:34], "repeats a pattern of 9 bytes"},
		{"hex digits twice", strings.Repeat("0123456789abcdef", 2), "repeats a pattern of 16 bytes"},
		{"mostly zeros", strings.Repeat("0", 40) + "12345678", "bits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := weakSecret("JWT_SECRET", tt.secret)
			if tt.want == "" && got != "" || !strings.Contains(got, tt.want) {
				t.Errorf("weakSecret(%q) = %q, want %q", tt.secret, got, tt.want)
			}
		})
	}
}

// TestProductionRefusesAtOnce: a production start with everything
// missing or weak names every problem in one error.
func TestProductionRefusesAtOnce(t *testing.T) {
	env := map[string]string{"PRODUCTION": "true", "MEDIA_SIGNING_KEY": strings.Repeat("k", 32)}
	_, err := parseConfig(nil, mapEnv(env), io.Discard)
	if err == nil {
		t.Fatal("production started without its settings")
	}
	for _, want := range []string{"needs REDIS_URL", "needs JWT_SECRET", "MEDIA_SIGNING_KEY has 1 distinct bytes", "needs MEDIA_URL or MEDIA_DIR"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}
