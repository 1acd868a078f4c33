package graph_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// testPicture is a profile picture as the media store describes one,
// without files (the read path never opens them).
func testPicture(user, id string, role social.ImageRole) *social.ProfileImage {
	img := &social.ProfileImage{ID: id, Original: social.ImageFile{MIME: "image/png", Bytes: 5000, Width: 800, Height: 600,
		Key: "profile/" + user + "/" + id + "/orig"}}
	for _, n := range role.Sizes() {
		h := n
		if role == social.Header {
			h = n / 3
		}
		img.Versions = append(img.Versions, social.ImageFile{Size: n, MIME: "image/jpeg", Bytes: int64(10 * n), Width: n, Height: h,
			Key: fmt.Sprintf("profile/%s/%s/%d", user, id, n)})
	}
	return img
}

// giveProfiles sets a display name, an avatar and (to every other one) a
// header on each user's profile, through the store.
func giveProfiles(t *testing.T, s *gatewaytest.Server, ids ...string) {
	t.Helper()
	ps := redisstore.NewProfileService(s.Store.DB)
	for i, id := range ids {
		name := "Author \u00e9 " + id
		u := social.ProfileUpdate{DisplayName: &name, Avatar: testPicture(id, "av"+id, social.Avatar)}
		if i%2 == 0 {
			u.Header = testPicture(id, "hd"+id, social.Header)
		}
		if _, err := ps.UpdateProfile(context.Background(), id, u); err != nil {
			t.Fatal(err)
		}
	}
}

// withProfileFields is the reference query with every author's display
// name and small avatar: what the reference app's page shows.
func withProfileFields(q string) string {
	return strings.ReplaceAll(q, "author { id name }", "author { id name displayName avatar(size: 48) { id url width height } }")
}

// TestProfileFieldsAddNoRoundTrip: the display name and the avatar come
// with each author in the reference page's round trips, on the fast
// path, with the same data as the naive mode.
func TestProfileFieldsAddNoRoundTrip(t *testing.T) {
	n := newReadPathNet(t, redisstore.Push)
	ref := referenceQueryWithFirst(t)
	q := withProfileFields(ref)
	if q == ref {
		t.Fatal("the reference query selects no author as this test expects")
	}
	n.do(t, n.s.Server, q, map[string]any{"first": 5}) // warm-up: scripts loaded
	for _, first := range []int{1, 20, 100} {
		t.Run(fmt.Sprint("first=", first), func(t *testing.T) {
			vars := map[string]any{"first": first}
			_, base, _ := n.do(t, n.s.Server, ref, vars)
			served := n.s.Fast.Served()
			r, rt, cmds := n.do(t, n.s.Server, q, vars)
			if rt != base || rt > 4 {
				t.Errorf("with display names and avatars: %d round trips (%d commands), without: %d; budget 4", rt, cmds, base)
			}
			if n.s.Fast.Served() == served {
				t.Error("the fast path declined the page")
			}
			if !strings.Contains(fmt.Sprint(r.Data), "/media/profile/") || !strings.Contains(fmt.Sprint(r.Data), "Author \u00e9") {
				t.Errorf("no author brought a display name and an avatar: %v", r.Data)
			}
			naive, _, _ := n.do(t, n.naive, q, vars)
			sameAsNaive(t, r, naive)
		})
	}
}
