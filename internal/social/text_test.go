package social_test

import (
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/social"
)

func TestCleanText(t *testing.T) {
	tests := []struct {
		name, in, want string
		min, max       int
		code           social.Code
	}{
		{"plain", "hello", "hello", 1, 10, ""},
		{"trimmed", "  hello \n", "hello", 1, 10, ""},
		{"inner newline and tab kept", "a\nb\tc", "a\nb\tc", 1, 10, ""},
		{"zero-width only is empty", "\u200b\u200d\ufeff", "", 1, 10, social.BadUserInput},
		{"zero-width trimmed around text", "\u200bhi\u2060", "hi", 1, 10, ""},
		{"empty allowed when min is 0", "   ", "", 0, 10, ""},
		{"NUL refused", "a\x00b", "", 1, 10, social.BadUserInput},
		{"escape refused", "a\x1b[31mb", "", 1, 10, social.BadUserInput},
		{"C1 control refused", "a\u0085b", "", 1, 10, social.BadUserInput},
		{"invalid UTF-8 refused", "a\xffb", "", 1, 10, social.BadUserInput},
		{"counts code points, not bytes", strings.Repeat("é", 10), strings.Repeat("é", 10), 1, 10, ""},
		{"too long", strings.Repeat("x", 11), "", 1, 10, social.BadUserInput},
		{"emoji is one code point each", "👍👍", "👍👍", 1, 2, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := social.CleanText(tt.in, "text", tt.min, tt.max)
			if code := social.ErrorCode(err); code != tt.code {
				t.Fatalf("code %q, want %q (err %v)", code, tt.code, err)
			}
			if err == nil && got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
