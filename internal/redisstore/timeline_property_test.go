package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// TestTimelineProperty writes a random network (follows, blocks, mutes,
// audience lists, reposts, deletions) and checks every read path against a
// model: no path shows a post to a viewer who may not see it, and the home
// timeline holds exactly the visible posts of the viewer and the authors
// they follow and have not muted, once fan-out is done. It runs in every
// mode, with a small cap and celebrity threshold so that beyond-cap pages
// and pulled authors are part of it.
func TestTimelineProperty(t *testing.T) {
	for _, mode := range modes {
		for seed := uint64(1); seed <= 2; seed++ {
			t.Run(fmt.Sprint(mode, "/seed", seed), func(t *testing.T) {
				cfg := feedConfig(mode)
				cfg.HomeCap = 15
				cfg.Backfill = 10
				cfg.CelebrityThreshold = 4
				s, rdb := feedStore(t, cfg)
				sc := randomScenario(rand.New(rand.NewPCG(seed, 99)), 14, 120)
				a := sc.apply(t, s, feedWorker(t, s, rdb))
				checkModel(t, s, sc, a)
			})
		}
	}
}

// checkModel compares every read path with what the scenario allows.
func checkModel(t *testing.T, s *redisstore.Store, sc scenario, a *applied) {
	t.Helper()
	ctx := context.Background()
	viewers := append([]string{""}, a.users...)
	rels := map[string]map[string]social.Relation{}
	for _, v := range a.users {
		rs, err := s.Relations(ctx, v, a.users)
		feedOK(t, err)
		rels[v] = map[string]social.Relation{}
		for i, u := range a.users {
			rels[v][u] = rs[i]
		}
	}
	in := func(is []int, u string) bool {
		return slices.ContainsFunc(is, func(i int) bool { return a.users[i] == u })
	}
	visible := func(v string, i int) bool {
		id, p := a.posts[i], sc.posts[i]
		author := a.users[p.author]
		switch {
		case id == "" || a.deleted[id]:
			return false
		case author == v:
			return true
		case v != "" && (rels[v][author].ViewerBlocked || rels[v][author].BlockedViewer):
			return false
		case p.onlyTo != nil:
			return v != "" && in(p.onlyTo, v)
		case p.notTo != nil: // not public: signed-in readers it does not list
			return v != "" && !in(p.notTo, v)
		}
		return true
	}
	var live []string
	for _, id := range a.posts {
		if id != "" {
			live = append(live, id)
		}
	}
	index := func(id string) int { return slices.Index(a.posts, id) }

	for _, v := range viewers {
		// post(id), repostOf and every loader read.
		got, err := s.VisiblePosts(ctx, v, live)
		feedOK(t, err)
		for j, p := range got {
			if want := visible(v, index(live[j])); (p != nil) != want {
				t.Fatalf("viewer %q, post %s: visible %v, want %v", v, live[j], p != nil, want)
			}
		}
		// userTimeline and User.posts.
		for ui, u := range a.users {
			var want []string
			for i := len(a.posts) - 1; i >= 0; i-- {
				if sc.posts[i].author == ui && visible(v, i) {
					want = append(want, a.posts[i])
				}
			}
			got := allPages(t, 4, func(p social.PageRequest) (social.Connection[string], error) {
				return userPostIDs(ctx, s, v, u, p)
			})
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("viewer %q, posts of %s:\ngot  %v\nwant %v", v, u, got, want)
			}
		}
		if v == "" {
			continue
		}
		// The home timeline.
		var want []string
		for i := len(a.posts) - 1; i >= 0; i-- {
			author := a.users[sc.posts[i].author]
			r := rels[v][author]
			if (author == v || (r.ViewerFollows && !r.ViewerMuted)) && visible(v, i) {
				want = append(want, a.posts[i])
			}
		}
		if got := home(t, s, v, 4); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("home of %s:\ngot  %v\nwant %v", v, got, want)
		}
	}
}
