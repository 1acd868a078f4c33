package faulttest_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/faulttest"
	"github.com/socialgw/gateway/internal/redistest"
)

// TestProfileEditAcrossGateways: two gateway processes, each caching
// profiles (REDIS_CLIENT_CACHE, on by default). A profile edit made
// through one is seen at once through it and, once Redis's announcement
// arrives, through the other, whose cache served the profile before.
func TestProfileEditAcrossGateways(t *testing.T) {
	redistest.Slow(t, "starts gateway processes")
	srv := newRedis(t, false)
	u := makeUsers(t, srv.Addr, 2)
	a := faulttest.StartGateway(t, "a", env(srv))
	b := faulttest.StartGateway(t, "b", env(srv))
	bio := func(url string) string {
		r := faulttest.MustQuery(t, url, u.tokens[1], `query($id: ID!) { user(id: $id) { bio } }`, map[string]any{"id": u.ids[0]})
		return fmt.Sprint(r.Data["user"].(map[string]any)["bio"])
	}
	const hits = "gateway_profile_cache_hits_total"
	for _, g := range []*faulttest.Proc{a, b} {
		redistest.Eventually(t, 10*time.Second, "the profile served from the cache", func() bool {
			before := faulttest.Metric(t, g.URL, hits)
			bio(g.URL)
			return faulttest.Metric(t, g.URL, hits) > before
		})
	}
	faulttest.MustQuery(t, a.URL, u.tokens[0], `mutation { updateProfile(input: {bio: "edited"}) { id } }`, nil)
	if got := bio(a.URL); got != "edited" {
		t.Errorf("the editor's gateway read %q right after the edit", got)
	}
	redistest.Eventually(t, 10*time.Second, "the edit seen through the other gateway", func() bool { return bio(b.URL) == "edited" })
}
