package social_test

import (
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/social"
)

// checkValid fails when err does not say what ok does: nil for valid
// input, BAD_USER_INPUT for invalid.
func checkValid(t *testing.T, err error, ok bool) {
	t.Helper()
	if ok && err != nil {
		t.Errorf("refused: %v", err)
	}
	if !ok && !social.IsCode(err, social.BadUserInput) {
		t.Errorf("err = %v, want BAD_USER_INPUT", err)
	}
}

func TestValidateName(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"3 characters", "abc", true},
		{"30 characters", strings.Repeat("a", 30), true},
		{"letters digits underscore", "Alice_42", true},
		{"only underscores", "___", true},
		{"2 characters", "ab", false},
		{"31 characters", strings.Repeat("a", 31), false},
		{"empty", "", false},
		{"space", "ali ce", false},
		{"dash", "ali-ce", false},
		{"dot", "ali.ce", false},
		{"at sign", "alice@x", false},
		{"non-ASCII letter", "alicé", false},
		{"Cyrillic look-alike", "аlice", false},
		{"trailing newline", "alice\n", false},
		{"NUL", "ali\x00ce", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkValid(t, social.ValidateName(tt.in), tt.ok)
		})
	}
}

func TestValidateEmail(t *testing.T) {
	tests := []struct {
		name, in string
		ok       bool
	}{
		{"simple", "alice@example.com", true},
		{"plus and dots", "alice.b+tag@mail.example.co.uk", true},
		{"upper case", "Alice@Example.COM", true},
		{"254 bytes", strings.Repeat("a", 64) + "@" + strings.Repeat("b", 185) + ".com", true},
		{"255 bytes", strings.Repeat("a", 64) + "@" + strings.Repeat("b", 186) + ".com", false},
		{"empty", "", false},
		{"no at", "alice.example.com", false},
		{"no local part", "@example.com", false},
		{"no domain", "alice@", false},
		{"domain without dot", "alice@localhost", false},
		{"two at signs", "alice@b@example.com", false},
		{"display name", "Alice <alice@example.com>", false},
		{"angle brackets", "<alice@example.com>", false},
		{"space inside", "ali ce@example.com", false},
		{"leading space", " alice@example.com", false},
		{"trailing newline", "alice@example.com\n", false},
		{"comment", "alice@example.com (Alice)", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkValid(t, social.ValidateEmail(tt.in), tt.ok)
		})
	}
}

// TestValidateEmailSpoofing: addresses that would read as another one
// (invisible characters, letters of a look-alike script mixed in) are
// refused; one script throughout, and internationalized addresses, pass.
func TestValidateEmailSpoofing(t *testing.T) {
	tests := []struct {
		email string
		ok    bool
	}{
		{"alice@example.com", true},
		{"jos\u00e9@example.com", true},
		{"\u0430\u043b\u0438\u0441\u0430@example.com", true}, // all Cyrillic
		{"user@b\u00fccher.example", true},
		{"al\u200bice@example.com", false},     // zero-width space
		{"alice\u200d@example.com", false},     // zero-width joiner
		{"\u202ealice@example.com", false},     // right-to-left override
		{"alice@exam\u00adple.com", false},     // soft hyphen
		{"\u0430lice@example.com", false},      // Cyrillic а among Latin
		{"alice@ex\u0430mple.com", false},      // in a domain label
		{"p\u03b1ypal@example.com", false},     // Greek alpha
		{"alice@\u0435xample.\u0441om", false}, // Cyrillic е and с in labels of Latin
	}
	for _, tc := range tests {
		err := social.ValidateEmail(tc.email)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateEmail(%q) = %v, want ok %v", tc.email, err, tc.ok)
		}
	}
}
