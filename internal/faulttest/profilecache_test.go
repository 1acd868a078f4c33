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
// arrives, through the other, whose cache served the profile before. A
// like, an unlike, a block and a delete are seen through the other at
// once.
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
	engagementAcross(t, u, a, b)
}

// engagementAcross: a like, an unlike, a block and a delete made through
// gateway a show through gateway b on the next read, cache or not: none
// of what they change is cached.
func engagementAcross(t *testing.T, u *users, a, b *faulttest.Proc) {
	r := faulttest.MustQuery(t, a.URL, u.tokens[0], `mutation { createPost(input: {content: "across"}) { id } }`, nil)
	id := fmt.Sprint(r.Data["createPost"].(map[string]any)["id"])
	vars := map[string]any{"id": id}
	const read = `query($id: ID!) { post(id: $id) { likesCount viewerHasLiked } }`
	post := func(token string) string {
		return fmt.Sprint(faulttest.MustQuery(t, b.URL, token, read, vars).Data["post"])
	}
	steps := []struct {
		what, by, mutation string
		token              int
		want               string
	}{
		{"a like", "likePost", `mutation($id: ID!) { likePost(postId: $id) { id } }`, 1, "map[likesCount:1 viewerHasLiked:true]"},
		{"an unlike", "unlikePost", `mutation($id: ID!) { unlikePost(postId: $id) { id } }`, 1, "map[likesCount:0 viewerHasLiked:false]"},
		{"a block", "block", `mutation($id: ID!) { block(userId: $id) { id } }`, 0, "<nil>"},
	}
	for _, st := range steps {
		v := vars
		if st.by == "block" {
			v = map[string]any{"id": u.ids[1]}
		}
		faulttest.MustQuery(t, a.URL, u.tokens[st.token], st.mutation, v)
		if got := post(u.tokens[1]); got != st.want {
			t.Errorf("after %s through one gateway, the other read %s, want %s", st.what, got, st.want)
		}
	}
	faulttest.MustQuery(t, a.URL, u.tokens[0], `mutation($id: ID!) { deletePost(id: $id) }`, vars)
	if got := post(u.tokens[0]); got != "<nil>" {
		t.Errorf("after a delete through one gateway, its author read %s through the other", got)
	}
}
