package redisstore_test

import (
	"testing"

	"github.com/socialgw/gateway/internal/redisstore"
)

// TestScreenKeeps: the screen drops only what is sure to be hidden from
// viewer 2 by its audience; whatever it cannot judge goes on to the check.
func TestScreenKeeps(t *testing.T) {
	tests := []struct {
		name      string
		author    any
		vis, pv   any
		flags     string
		wantKeeps bool
	}{
		{"public", "1", "PUBLIC", "1", "", true},
		{"deleted", nil, nil, nil, "", false},
		{"only to others", "1", "ONLY_TO", "1", "", false},
		{"only to others, liked earlier", "1", "ONLY_TO", "1", "l", false},
		{"only to the viewer", "1", "ONLY_TO", "1", "a", true},
		{"not to the viewer", "1", "NOT_TO", "1", "a", false},
		{"not to others", "1", "NOT_TO", "1", "l", true},
		{"own only-to post", "2", "ONLY_TO", "1", "", true},
		{"no PostViewers yet", "1", "ONLY_TO", nil, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := redisstore.ScreenKeeps("2", []any{tt.author, tt.vis, tt.pv}, tt.flags); got != tt.wantKeeps {
				t.Fatalf("keeps = %v, want %v", got, tt.wantKeeps)
			}
		})
	}
}
