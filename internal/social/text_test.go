package social_test

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

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
		{"Hangul filler only is empty", "\u3164\u3164", "", 1, 10, social.BadUserInput},
		{"blank braille only is empty", "\u2800", "", 1, 10, social.BadUserInput},
		{"soft hyphen only is empty", "\u00ad\u00ad", "", 1, 10, social.BadUserInput},
		{"tag characters only are empty", "\U000e0041\U000e0042\U000e007f", "", 1, 10, social.BadUserInput},
		{"variation selectors only are empty", "\ufe0f\U000e0100", "", 1, 10, social.BadUserInput},
		{"mixed invisibles only are empty", " \u115f\u1160\uffa0\u200e\u034f\u180e ", "", 1, 10, social.BadUserInput},
		{"invisible-only bio is empty when allowed", "\u3164", "", 0, 10, ""},
		{"emoji presentation selector kept at the end", "I \u2764\ufe0f", "I \u2764\ufe0f", 1, 10, ""},
		{"zero-width joiner inside an emoji kept", "\U0001f469\u200d\U0001f4bb", "\U0001f469\u200d\U0001f4bb", 1, 10, ""},
		{"right-to-left override refused", "exe.\u202egpj", "", 1, 20, social.BadUserInput},
		{"isolate refused", "a\u2066b\u2069", "", 1, 20, social.BadUserInput},
		{"right-to-left mark allowed", "\u05e9\u05dc\u05d5\u05dd\u200f!", "\u05e9\u05dc\u05d5\u05dd\u200f!", 1, 20, ""},
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

// FuzzCleanText: no input panics, and accepted text is what CleanText
// promises: valid UTF-8 within the length bounds, trimmed, without control
// or bidi override characters, with something visible, and accepted again
// unchanged (cleaning is idempotent).
//
//	go test -run '^$' -fuzz=FuzzCleanText -fuzztime=5s ./internal/social/
func FuzzCleanText(f *testing.F) {
	for _, s := range []string{"hello", "  hi  ", "\u3164", "\u2800\u00ad", "a\u202eb", "\xff", "\u2764\ufe0f", "a\x00", "\U000e0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := social.CleanText(s, "text", 1, 50)
		if err != nil {
			if social.ErrorCode(err) != social.BadUserInput {
				t.Fatalf("CleanText(%q): code %q, want BAD_USER_INPUT", s, social.ErrorCode(err))
			}
			return
		}
		if !utf8.ValidString(got) || strings.TrimSpace(got) != got {
			t.Fatalf("CleanText(%q) = %q: invalid or untrimmed", s, got)
		}
		if n := utf8.RuneCountInString(got); n < 1 || n > 50 {
			t.Fatalf("CleanText(%q) = %q: %d characters", s, got, n)
		}
		if strings.ContainsAny(got, "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\x00\x1b\r") {
			t.Fatalf("CleanText(%q) = %q kept a control or bidi character", s, got)
		}
		again, err := social.CleanText(got, "text", 1, 50)
		if err != nil || again != got {
			t.Fatalf("CleanText is not idempotent on %q: %q, %v", got, again, err)
		}
	})
}

func TestMentions(t *testing.T) {
	tests := []struct {
		text string
		want []string
	}{
		{"hi @Alice and @bob_2!", []string{"alice", "bob_2"}},
		{"@alice @ALICE @alice", []string{"alice"}},
		{"mail me at carol@example.com", nil},
		{"@@alice", nil},
		{"@al is too short, @" + strings.Repeat("x", 31) + " too long", nil},
		{"(@dave), @erin.", []string{"dave", "erin"}},
		{"@u1_ @u2_ @u3_ @u4_ @u5_ @u6_ @u7_ @u8_ @u9_ @u10 @u11", []string{"u1_", "u2_", "u3_", "u4_", "u5_", "u6_", "u7_", "u8_", "u9_", "u10"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := social.Mentions(tt.text); !slices.Equal(got, tt.want) {
			t.Errorf("Mentions(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}
