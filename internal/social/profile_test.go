package social_test

import (
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/social"
)

func TestValidateDisplayName(t *testing.T) {
	tests := []struct {
		name, in, want string
		code           social.Code
	}{
		{"plain", "Alice", "Alice", ""},
		{"trimmed", "  Alice  ", "Alice", ""},
		{"composed (NFC)", "Ame\u0301lie", "Am\u00e9lie", ""},
		{"already composed", "Am\u00e9lie", "Am\u00e9lie", ""},
		{"emoji", "Alice 🌷", "Alice 🌷", ""},
		{"empty removes it", "", "", ""},
		{"invisible only is empty", "\u3164\u200b", "", ""},
		{"at the bound", strings.Repeat("é", social.MaxDisplayNameLen), strings.Repeat("é", social.MaxDisplayNameLen), ""},
		{"bound counted after composing", strings.Repeat("e\u0301", social.MaxDisplayNameLen), strings.Repeat("é", social.MaxDisplayNameLen), ""},
		{"too long", strings.Repeat("n", social.MaxDisplayNameLen+1), "", social.BadUserInput},
		{"newline", "Ali\nce", "", social.BadUserInput},
		{"tab", "Ali\tce", "", social.BadUserInput},
		{"control character", "Ali\x07ce", "", social.BadUserInput},
		{"right-to-left override", "Alice\u202egnp.exe", "", social.BadUserInput},
		{"isolate", "a\u2067b", "", social.BadUserInput},
		{"invalid UTF-8", "a\xffb", "", social.BadUserInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := social.ValidateDisplayName(tc.in)
			if social.ErrorCode(err) != tc.code || (err == nil && got != tc.want) {
				t.Fatalf("ValidateDisplayName(%q) = %q, %v; want %q, %q", tc.in, got, err, tc.want, tc.code)
			}
		})
	}
}

func TestProfileImageVersion(t *testing.T) {
	img := &social.ProfileImage{ID: "p", Original: social.ImageFile{Key: "o"},
		Versions: []social.ImageFile{{Size: 48, Key: "48"}, {Size: 96, Key: "96"}, {Size: 400, Key: "400"}}}
	for _, tc := range []struct {
		want int
		key  string
	}{{0, "400"}, {-3, "400"}, {1, "48"}, {48, "48"}, {49, "96"}, {96, "96"}, {200, "400"}, {4000, "400"}} {
		if got := img.Version(tc.want).Key; got != tc.key {
			t.Errorf("Version(%d) = %s, want %s", tc.want, got, tc.key)
		}
	}
	if got := img.Keys(); strings.Join(got, ",") != "o,48,96,400" {
		t.Errorf("Keys = %v", got)
	}
}

func TestCheckProfileUpdate(t *testing.T) {
	s := func(v string) *string { return &v }
	tests := []struct {
		name                 string
		u                    social.ProfileUpdate
		newAvatar, newHeader bool
		code                 social.Code
	}{
		{"text", social.ProfileUpdate{Bio: s(" hi "), DisplayName: s(" A ")}, false, false, ""},
		{"a new avatar", social.ProfileUpdate{}, true, false, ""},
		{"avatar and its removal", social.ProfileUpdate{RemoveAvatar: true}, true, false, social.BadUserInput},
		{"header and its removal", social.ProfileUpdate{RemoveHeader: true}, false, true, social.BadUserInput},
		{"a removal alone", social.ProfileUpdate{RemoveAvatar: true, RemoveHeader: true}, false, false, ""},
		{"bad bio", social.ProfileUpdate{Bio: s(strings.Repeat("b", social.MaxBioLen+1))}, true, false, social.BadUserInput},
		{"bad display name", social.ProfileUpdate{DisplayName: s("\u202e")}, false, false, social.BadUserInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.u
			if err := social.CheckProfileUpdate(&u, tc.newAvatar, tc.newHeader); social.ErrorCode(err) != tc.code {
				t.Fatalf("CheckProfileUpdate = %v, want %q", err, tc.code)
			}
			if tc.code == "" && u.Bio != nil && *u.Bio != "hi" {
				t.Errorf("bio not trimmed: %q", *u.Bio)
			}
		})
	}
}
