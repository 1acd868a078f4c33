package social_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/social"
)

func TestTags(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"plain", "hello #Go and #redis_7!", []string{"go", "redis_7"}},
		{"case folded once", "#Go #GO #go", []string{"go"}},
		{"unicode letters", "#Café #東京 #Straße", []string{"café", "東京", "strasse"}},
		{"decomposed accent is the same tag", "#Cafe\u0301 #café", []string{"café"}},
		{"digits alone are no tag", "#1 #2024 #2024_", []string{"2024_"}},
		{"inside a word is no tag", "a#b c##d https://x.org/#anchor", nil},
		{"punctuation ends a tag", "(#one), #two. #three-four", []string{"one", "two", "three"}},
		{"empty", "# #", nil},
		{"too long", "#" + strings.Repeat("x", social.MaxTagLen+1) + " #ok", []string{"ok"}},
		{"longest", "#" + strings.Repeat("x", social.MaxTagLen), []string{strings.Repeat("x", social.MaxTagLen)}},
		{"at most MaxTags", "#a1 #a2 #a3 #a4 #a5 #a6 #a7 #a8 #a9 #a10 #a11", []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9", "a10"}},
		{"after a mention", "@bob#tag", nil},
		{"no text", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := social.Tags(tt.text); !slices.Equal(got, tt.want) {
				t.Errorf("Tags(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestValidateTag(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: "Go", want: "go"},
		{in: "#Go", want: "go"},
		{in: "  straße ", want: "strasse"},
		{in: "", bad: true},
		{in: "#", bad: true},
		{in: "two words", bad: true},
		{in: "a-b", bad: true},
		{in: "123", bad: true},
		{in: strings.Repeat("x", social.MaxTagLen), want: strings.Repeat("x", social.MaxTagLen)},
		{in: strings.Repeat("x", social.MaxTagLen+1), bad: true},
		{in: "\xff", bad: true},
	}
	for _, tt := range tests {
		got, err := social.ValidateTag(tt.in)
		if tt.bad {
			if social.ErrorCode(err) != social.BadUserInput {
				t.Errorf("ValidateTag(%q) = %q, %v; want BAD_USER_INPUT", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ValidateTag(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestValidateSearchPrefix(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: "Al", want: "al"},
		{in: "@Al", want: "al"},
		{in: " Zoë ", want: "zoë"},
		{in: "", bad: true},
		{in: "@", bad: true},
		{in: "   ", bad: true},
		{in: strings.Repeat("a", social.MaxSearchPrefix+1), bad: true},
		{in: "a\x00", bad: true},
	}
	for _, tt := range tests {
		got, err := social.ValidateSearchPrefix(tt.in)
		if tt.bad {
			if social.ErrorCode(err) != social.BadUserInput {
				t.Errorf("ValidateSearchPrefix(%q) = %q, %v; want BAD_USER_INPUT", tt.in, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("ValidateSearchPrefix(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
