package social_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/social"
)

// FuzzDecodeCursor: no client-supplied cursor panics or yields anything but
// BAD_USER_INPUT or exactly n non-empty parts, and the parts it accepts
// survive a round trip through EncodeCursor.
//
//	go test -run '^$' -fuzz=FuzzDecodeCursor -fuzztime=5s ./internal/social/
func FuzzDecodeCursor(f *testing.F) {
	for _, s := range []string{
		social.EncodeCursor("1700000000000", "42"),
		social.EncodeCursor("7"),
		"", "v1:", "djE6", "djE6Og", "!!!", "djE6MTox\n", strings.Repeat("A", 300),
	} {
		f.Add(s, 2)
		f.Add(s, 1)
	}
	f.Fuzz(func(t *testing.T, c string, n int) {
		if n < 1 || n > 4 {
			return
		}
		parts, err := social.DecodeCursor(c, n)
		if err != nil {
			if parts != nil || social.ErrorCode(err) != social.BadUserInput {
				t.Fatalf("DecodeCursor(%q, %d) = %q, %v: want nil parts and BAD_USER_INPUT", c, n, parts, err)
			}
			return
		}
		if len(parts) != n || slices.Contains(parts, "") {
			t.Fatalf("DecodeCursor(%q, %d) = %q", c, n, parts)
		}
		again, err := social.DecodeCursor(social.EncodeCursor(parts...), n)
		if err != nil || !slices.Equal(again, parts) {
			t.Fatalf("parts %q do not round trip: %q, %v", parts, again, err)
		}
	})
}
