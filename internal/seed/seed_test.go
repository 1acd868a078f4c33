package seed_test

import (
	"context"
	"reflect"
	"slices"
	"testing"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/seed"
	"github.com/socialgw/gateway/internal/social"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestPlanIsDeterministicAndSkewed(t *testing.T) {
	c := seed.Config{Users: 2000, Posts: 20000, Seed: 7}
	a, b := seed.NewPlan(c), seed.NewPlan(c)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two plans of one config differ")
	}
	if other := seed.NewPlan(seed.Config{Users: 2000, Posts: 20000, Seed: 8}); reflect.DeepEqual(a.Follows, other.Follows) {
		t.Fatal("plans of two seeds are the same")
	}

	followers := make([]int, a.Users)
	for _, f := range a.Follows {
		if f[0] == f[1] {
			t.Fatalf("user %d follows themself", f[0])
		}
		followers[f[1]]++
	}
	posts := make([]int, a.Users)
	var reposts, only, not int
	for i, p := range a.Posts {
		posts[p.Author]++
		switch {
		case p.RepostOf >= 0:
			reposts++
			if o := a.Posts[p.RepostOf]; int(p.RepostOf) >= i || o.Vis != social.Public || o.RepostOf >= 0 {
				t.Fatalf("post %d reposts %d, which is not an earlier public original", i, p.RepostOf)
			}
		case p.Vis == social.OnlyTo:
			only++
			if len(p.Audience) == 0 || slices.Contains(p.Audience, p.Author) {
				t.Fatalf("post %d: ONLY_TO audience %v", i, p.Audience)
			}
		case p.Vis == social.NotTo:
			not++
		}
	}
	// Power laws: the top is far above the median.
	for name, counts := range map[string][]int{"followers": followers, "posts": posts} {
		s := slices.Sorted(slices.Values(counts))
		if top, med := s[len(s)-1], s[len(s)/2]; top < 20*max(med, 1) {
			t.Errorf("%s: top %d, median %d: not skewed", name, top, med)
		}
	}
	n := float64(len(a.Posts))
	if r := float64(reposts) / n; r < 0.03 || r > 0.07 {
		t.Errorf("reposts: %.3f of posts", r)
	}
	if only == 0 || not == 0 {
		t.Errorf("%d ONLY_TO and %d NOT_TO posts", only, not)
	}
	if len(a.Likes) < len(a.Posts)/2 || len(a.Comments) < len(a.Posts)/4 {
		t.Errorf("%d likes and %d comments for %d posts", len(a.Likes), len(a.Comments), len(a.Posts))
	}
}

// TestRun seeds a tiny data set and checks it against the plan, through
// the store's read APIs.
func TestRun(t *testing.T) {
	rdb := redistest.Client(t)
	prefix := redistest.Prefix(t)
	store := redisstore.New(rdb, prefix)
	ctx := context.Background()
	c := seed.Config{Users: 60, Posts: 400, Seed: 3, Concurrency: 8}
	d, err := seed.Run(ctx, store, c)
	if err != nil {
		t.Fatal(err)
	}
	plan := seed.NewPlan(c)
	if d.Stats.Users != 60 || d.Stats.Follows != len(plan.Follows) || d.Stats.Skipped != 0 ||
		d.Stats.Posts != 400 || d.Stats.Likes != len(plan.Likes) || d.Stats.Comments != len(plan.Comments) {
		t.Fatalf("stats %+v for a plan of %d follows, %d likes, %d comments", d.Stats, len(plan.Follows), len(plan.Likes), len(plan.Comments))
	}
	counts, err := store.UserCounts(ctx, d.UserIDs)
	if err != nil {
		t.Fatal(err)
	}
	for i, uc := range counts {
		if uc.Followers != d.Followers[i] || uc.Following != d.Following[i] {
			t.Errorf("user %d: counts %+v, want %d followers and %d following", i, uc, d.Followers[i], d.Following[i])
		}
	}
	pc, err := store.PostCounts(ctx, d.PostIDs)
	if err != nil {
		t.Fatal(err)
	}
	var likes, comments int
	for _, x := range pc {
		likes += x.Likes
		comments += x.Comments
	}
	if likes != d.Stats.Likes || comments != d.Stats.Comments {
		t.Errorf("the posts count %d likes and %d comments, want %d and %d", likes, comments, d.Stats.Likes, d.Stats.Comments)
	}
	// Fan-out is done: a reader with followees has a home timeline, and
	// every post of it is by someone they follow, or their own.
	readers := d.Readers(10, 1)
	if len(readers) == 0 {
		t.Fatal("no readers")
	}
	for _, u := range readers {
		page, err := store.HomePage(ctx, d.UserIDs[u], social.PageRequest{First: 20}, readplan.PageWants{})
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Posts.Items) == 0 {
			t.Errorf("reader %d follows %d users and has an empty home timeline", u, d.Following[u])
		}
	}

	if err := seed.Save(ctx, rdb, prefix, d); err != nil {
		t.Fatal(err)
	}
	got, err := seed.Load(ctx, rdb, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.UserIDs, d.UserIDs) || got.Stats.Posts != 400 || got.Config.Seed != 3 {
		t.Errorf("loaded %+v", got.Stats)
	}
	if err := seed.Clear(ctx, rdb, prefix); err != nil {
		t.Fatal(err)
	}
	if _, err := seed.Load(ctx, rdb, prefix); err != seed.ErrNoData {
		t.Errorf("after Clear: %v, want ErrNoData", err)
	}
	if n := redistest.Keys(t, rdb, prefix+"*"); len(n) != 0 {
		t.Errorf("after Clear: %d keys left", len(n))
	}
}

func TestStar(t *testing.T) {
	rdb := redistest.Client(t)
	store := redisstore.New(rdb, redistest.Prefix(t))
	ctx := context.Background()
	s, err := seed.NewStar(ctx, store, 50, 4)
	if err != nil {
		t.Fatal(err)
	}
	counts, err := store.UserCounts(ctx, []string{s.Celebrity, s.Quiet})
	if err != nil {
		t.Fatal(err)
	}
	if counts[0].Followers != 50 || counts[1].Followers != 0 || len(s.Followers) != 50 {
		t.Errorf("counts %+v, %d followers", counts, len(s.Followers))
	}
}
