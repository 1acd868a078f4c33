package redisstore_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// TestSearchUsers: a prefix finds names and display names whatever their
// case, most followed first, without the users in a block with the
// viewer; the index follows display-name edits and removals.
func TestSearchUsers(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	names := []string{"viewer", "Alice", "alfred", "ALBERT", "bob", "blocker", "blocked", "alma"}
	ids := map[string]string{}
	for _, n := range names {
		u, err := s.CreateUser(ctx, social.NewAccount{Name: n + "_" + strings.ToLower(t.Name()[:4]), Email: n + "@example.com", PasswordHash: "x"})
		feedOK(t, err)
		ids[n] = u.ID
	}
	// Followers: alfred 3, alice 2, albert 1, alma 0.
	for who, fans := range map[string][]string{"alfred": {"bob", "viewer", "blocker"}, "Alice": {"bob", "viewer"}, "ALBERT": {"bob"}} {
		for _, f := range fans {
			feedOK(t, s.Follow(ctx, ids[f], ids[who]))
		}
	}
	feedOK(t, s.Block(ctx, ids["blocker"], ids["viewer"]))
	feedOK(t, s.Block(ctx, ids["viewer"], ids["blocked"]))
	feedOK(t, s.IndexDisplayName(ctx, ids["bob"], "", "Álvaro Bob"))

	search := func(viewer, prefix string, first int) []string {
		t.Helper()
		got, err := s.SearchUsers(ctx, ids[viewer], prefix, first)
		feedOK(t, err)
		out := make([]string, len(got))
		for i, id := range got {
			for n, v := range ids {
				if v == id {
					out[i] = n
				}
			}
		}
		return out
	}
	tests := []struct {
		viewer, prefix string
		first          int
		want           []string
	}{
		{"viewer", "al", 10, []string{"alfred", "Alice", "ALBERT", "alma"}},
		{"viewer", "AL", 2, []string{"alfred", "Alice"}},
		{"viewer", "@ali", 10, []string{"Alice"}},
		{"viewer", "ál", 10, []string{"bob"}},
		{"viewer", "bl", 10, nil},                         // blocker blocked the viewer, who blocked blocked
		{"", "bl", 10, []string{"blocked", "blocker"}},    // anonymous: both, by key
		{"bob", "bl", 10, []string{"blocked", "blocker"}}, // no block with bob
		{"viewer", "zz", 10, nil},
	}
	for _, tt := range tests {
		if got := search(tt.viewer, tt.prefix, tt.first); !slices.Equal(got, tt.want) && !(len(got) == 0 && len(tt.want) == 0) {
			t.Errorf("%s searches %q (first %d) = %v, want %v", tt.viewer, tt.prefix, tt.first, got, tt.want)
		}
	}
	feedOK(t, s.IndexDisplayName(ctx, ids["bob"], "Álvaro Bob", "Bobby"))
	if got := search("viewer", "ál", 10); len(got) != 0 {
		t.Errorf("an old display name still finds %v", got)
	}
	feedOK(t, s.UnindexUser(ctx, ids["alfred"], "alfred_"+strings.ToLower(t.Name()[:4]), ""))
	if got := search("viewer", "alf", 10); len(got) != 0 {
		t.Errorf("a user taken out of the index is still found: %v", got)
	}
	for _, bad := range []string{"", "@", "  ", strings.Repeat("x", social.MaxSearchPrefix+1)} {
		if _, err := s.SearchUsers(ctx, "", bad, 10); social.ErrorCode(err) != social.BadUserInput {
			t.Errorf("SearchUsers(%q) = %v, want BAD_USER_INPUT", bad, err)
		}
	}
}

// TestBuildUserSearch: a database written before the index gets it once.
func TestBuildUserSearch(t *testing.T) {
	s, rdb := feedStore(t)
	ctx := context.Background()
	ids := feedUsers(t, s, 3)
	feedOK(t, rdb.Del(ctx, s.Keys().UserSearch()).Err())
	n, err := s.BuildUserSearch(ctx)
	feedOK(t, err)
	if n != 3 {
		t.Errorf("indexed %d names, want 3", n)
	}
	if n, _ := s.BuildUserSearch(ctx); n != 0 {
		t.Errorf("a second build indexed %d", n)
	}
	got, err := s.SearchUsers(ctx, "", "u1_", 10)
	feedOK(t, err)
	if !slices.Equal(got, ids[1:2]) {
		t.Errorf("search after the build = %v, want %v", got, ids[1:2])
	}
}

// TestSearchFollowsDisplayNames: a profile edit moves the user's display
// name in the search index; the name itself stays findable.
func TestSearchFollowsDisplayNames(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	ps := redisstore.NewProfileService(s.DB)
	u, err := s.CreateUser(ctx, social.NewAccount{Name: "quinn_dn", Email: "quinn@example.com", PasswordHash: "x"})
	feedOK(t, err)
	set := func(name string) {
		t.Helper()
		_, err := ps.UpdateProfile(ctx, u.ID, social.ProfileUpdate{DisplayName: &name})
		feedOK(t, err)
	}
	found := func(prefix string) bool {
		t.Helper()
		got, err := s.SearchUsers(ctx, "", prefix, 10)
		feedOK(t, err)
		return slices.Contains(got, u.ID)
	}
	steps := []struct {
		name   string
		found  []string
		absent []string
	}{
		{"Zoë Winter", []string{"zoë", "ZOË W", "quinn"}, []string{"xav"}},
		{"Xavier", []string{"xav", "quinn"}, []string{"zoë"}},
		{"", []string{"quinn"}, []string{"xav", "zoë"}},
	}
	for _, st := range steps {
		set(st.name)
		for _, p := range st.found {
			if !found(p) {
				t.Errorf("display name %q: prefix %q does not find the user", st.name, p)
			}
		}
		for _, p := range st.absent {
			if found(p) {
				t.Errorf("display name %q: prefix %q still finds the user", st.name, p)
			}
		}
	}
}
