package demo

import (
	"testing"

	"github.com/socialgw/gateway/internal/social"
)

func TestNamesValidAndDistinct(t *testing.T) {
	seen := map[string]int{}
	for i := range users {
		n := name(i)
		if err := social.ValidateName(n); err != nil {
			t.Errorf("name(%d) = %q: %v", i, n, err)
		}
		if j, ok := seen[n]; ok {
			t.Errorf("name(%d) = name(%d) = %q", i, j, n)
		}
		seen[n] = i
	}
	if users > len(firstNames)*len(lastNames) {
		t.Errorf("%d users, but only %d names", users, len(firstNames)*len(lastNames))
	}
}
