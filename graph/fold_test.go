package graph_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/socialgw/gateway/internal/redisstore"
)

const foldPageDoc = `query($first: Int, $after: String) { timeline(first: $first, after: $after) {
	edges { node { id repostOf { id } } } pageInfo { hasNextPage endCursor } } }`

// D follows A and B; B posts X, then six more; A reposts X. D's home
// timeline, read three posts a page, shows X once: A's repost of it, on
// the first page, and not X itself further down. In hybrid mode with A
// and B pulled, the repost comes from A's own timeline at read time and
// X from B's.
func TestHomeFoldAcrossPagesGraph(t *testing.T) {
	type setup struct {
		name string
		mode redisstore.FeedMode
		tune func(*redisstore.FeedConfig)
	}
	setups := []setup{{"push", redisstore.Push, nil}, {"pull", redisstore.Pull, nil}, {"hybrid", redisstore.Hybrid, nil},
		{"hybrid pulled", redisstore.Hybrid, func(c *redisstore.FeedConfig) { c.CelebrityThreshold = 0 }}}
	for _, st := range setups {
		t.Run(st.name, func(t *testing.T) {
			var tune []func(*redisstore.FeedConfig)
			if st.tune != nil {
				tune = append(tune, st.tune)
			}
			s := newFeedServer(t, st.mode, tune...)
			d, a, b := s.Register(t, "d"), s.Register(t, "a"), s.Register(t, "b")
			for _, u := range []string{a.ID, b.ID} {
				s.MustDo(t, d.Token, `mutation($u: ID!) { follow(userId: $u) { id } }`, map[string]any{"u": u})
			}
			x := s.post(t, b, map[string]any{"content": "x"})
			var later []string
			for i := range 6 {
				later = append(later, s.post(t, b, map[string]any{"content": fmt.Sprint("b", i)}))
			}
			r := s.post(t, a, map[string]any{"content": "", "repostOf": x})
			s.drain(t)
			slices.Reverse(later)
			want := append([]string{r}, later...)

			var got []string
			var after any
			for page := 0; ; page++ {
				res := s.MustDo(t, d.Token, foldPageDoc, map[string]any{"first": 3, "after": after})
				edges, _ := res.Get("timeline.edges").([]any)
				for i := range edges {
					id := res.Str(fmt.Sprintf("timeline.edges.%d.node.id", i))
					if id == x {
						t.Errorf("page %d shows X (%s) again, after A's repost of it (%s)", page, x, r)
					}
					got = append(got, id)
				}
				if res.Get("timeline.pageInfo.hasNextPage") != true {
					break
				}
				if page > 10 {
					t.Fatal("too many pages")
				}
				after = res.Str("timeline.pageInfo.endCursor")
			}
			if !slices.Equal(got, want) {
				t.Errorf("timeline = %v, want %v (X = %s, A's repost = %s)", got, want, x, r)
			}
		})
	}
}
