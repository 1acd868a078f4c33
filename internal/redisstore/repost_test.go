package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/social"
)

// A repost has its original's audience: it never shows the original, nor
// counts toward its repostsCount, for anyone the original is hidden from.
func TestRepostTakesOriginalAudience(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 5)
	author, insider, outsider, hidden, other := u[0], u[1], u[2], u[3], u[4]
	only := feedPost(t, s, author, social.NewPost{OnlyTo: []string{insider}})
	not := feedPost(t, s, author, social.NewPost{NotTo: []string{hidden}})
	public := feedPost(t, s, author, social.NewPost{})

	tests := []struct {
		name     string
		original *social.Post
		reposter string
		in       social.NewPost
		code     social.Code
		vis      social.Visibility
		seenBy   []string // besides the reposter
		hiddenTo []string
	}{
		{"only-to original", only, insider, social.NewPost{Content: "look"}, "", social.OnlyTo, []string{author}, []string{outsider, hidden, other}},
		{"plain repost of only-to original", only, insider, social.NewPost{}, "", social.OnlyTo, []string{author}, []string{outsider, other}},
		{"not-to original", not, other, social.NewPost{Content: "look"}, "", social.NotTo, []string{author, insider, outsider}, []string{hidden}},
		{"public original", public, outsider, social.NewPost{}, "", social.Public, []string{author, hidden}, nil},
		{"onlyTo on a repost", public, other, social.NewPost{Content: "x", OnlyTo: []string{insider}}, social.BadUserInput, "", nil, nil},
		{"notTo on a repost", public, other, social.NewPost{Content: "x", NotTo: []string{insider}}, social.BadUserInput, "", nil, nil},
		{"outsider cannot repost", only, outsider, social.NewPost{}, social.NotFound, "", nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.in.RepostOf = tc.original.ID
			r, err := s.CreatePost(ctx, tc.reposter, tc.in)
			if got := social.ErrorCode(err); got != tc.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tc.code)
			}
			if err != nil {
				return
			}
			if r.Visibility != tc.vis || r.Plain() != (tc.in.Content == "") {
				t.Fatalf("repost = %+v, want visibility %s", r, tc.vis)
			}
			for _, v := range append([]string{tc.reposter}, tc.seenBy...) {
				if got, _ := s.VisiblePosts(ctx, v, []string{r.ID}); got[0] == nil {
					t.Errorf("user %s does not see the repost", v)
				}
			}
			hiddenTo := tc.hiddenTo
			if tc.vis != social.Public {
				hiddenTo = append(hiddenTo, "") // anonymous readers
			}
			for _, v := range hiddenTo {
				if got, _ := s.VisiblePosts(ctx, v, []string{r.ID}); got[0] != nil {
					t.Errorf("user %q sees the repost", v)
				}
			}
		})
	}
}

// A plain repost is one per user and post: asked again, even concurrently,
// CreatePost returns the one there is; deleting it undoes it.
func TestPlainRepostIsOnePerUser(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	author, fan := u[0], u[1]
	orig := feedPost(t, s, author, social.NewPost{})

	reposted := func() (bool, int) {
		t.Helper()
		m, err := s.Marks(ctx, fan, []string{orig.ID})
		feedOK(t, err)
		c, err := s.PostCounts(ctx, []string{orig.ID})
		feedOK(t, err)
		return m[0].Reposted, c[0].Reposts
	}
	if r, n := reposted(); r || n != 0 {
		t.Fatalf("before: reposted %v, count %d", r, n)
	}

	ids := make([]string, 8)
	var wg sync.WaitGroup
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, err := s.CreatePost(ctx, fan, social.NewPost{RepostOf: orig.ID})
			if err != nil && !social.IsCode(err, social.Conflict) {
				t.Errorf("repost %d: %v", i, err)
				return
			}
			if p != nil {
				ids[i] = p.ID
			}
		}()
	}
	wg.Wait()
	ids = slices.DeleteFunc(ids, func(id string) bool { return id == "" })
	slices.Sort(ids)
	if len(slices.Compact(ids)) != 1 {
		t.Fatalf("concurrent plain reposts made %v", ids)
	}
	plain := ids[0]
	again, err := s.CreatePost(ctx, fan, social.NewPost{RepostOf: orig.ID})
	feedOK(t, err)
	if again.ID != plain {
		t.Fatalf("second plain repost %s, want the first, %s", again.ID, plain)
	}
	quote := feedPost(t, s, fan, social.NewPost{Content: "and a word", RepostOf: orig.ID})
	if r, n := reposted(); !r || n != 2 {
		t.Fatalf("after: reposted %v, count %d; want true, 2", r, n)
	}

	feedOK(t, s.DeletePost(ctx, fan, plain))
	if r, n := reposted(); r || n != 1 {
		t.Fatalf("after deleting the plain repost: reposted %v, count %d; want false, 1", r, n)
	}
	feedOK(t, s.DeletePost(ctx, fan, quote.ID))
	next, err := s.CreatePost(ctx, fan, social.NewPost{RepostOf: orig.ID})
	feedOK(t, err)
	if next.ID == plain {
		t.Fatal("a deleted plain repost came back")
	}
	if r, n := reposted(); !r || n != 1 {
		t.Fatalf("reposted again: reposted %v, count %d", r, n)
	}
}

// A claim whose repost is not written yet is a write in progress
// (CONFLICT) for a while; after that its writer is taken for dead and the
// next plain repost takes it over. The claim's age is Redis's to tell:
// a gateway whose clock is an hour ahead or behind judges it the same.
func TestPlainRepostUnwrittenClaim(t *testing.T) {
	tests := []struct {
		name     string
		skew     time.Duration // the gateway's clock minus Redis's
		age      time.Duration // the claim's age by Redis's clock
		takeOver bool
	}{
		{"fresh claim", 0, 0, false},
		{"stale claim", 0, 11 * time.Second, true},
		{"fresh claim, gateway clock ahead", time.Hour, time.Second, false},
		{"stale claim, gateway clock behind", -time.Hour, 11 * time.Second, true},
		{"fresh claim, gateway clock behind", -time.Hour, time.Second, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, rdb := feedStore(t)
			s.SetClock(func() time.Time { return time.Now().Add(tc.skew) })
			ctx := context.Background()
			u := feedUsers(t, s, 2)
			orig := feedPost(t, s, u[0], social.NewPost{})
			now, err := rdb.Time(ctx).Result()
			feedOK(t, err)
			claim := fmt.Sprintf("999999|%d", now.Add(-tc.age).UnixMilli())
			feedOK(t, rdb.HSet(ctx, s.Keys().PostPlainReposts(orig.ID), u[1], claim).Err())
			p, err := s.CreatePost(ctx, u[1], social.NewPost{RepostOf: orig.ID})
			if !tc.takeOver {
				if !social.IsCode(err, social.Conflict) {
					t.Fatalf("repost = %+v, %v; want CONFLICT", p, err)
				}
				return
			}
			feedOK(t, err)
			if p.ID == "999999" || !p.Plain() {
				t.Fatalf("repost = %+v", p)
			}
			// The new claim is dated by Redis's clock, not the gateway's.
			got := rdb.HGet(ctx, s.Keys().PostPlainReposts(orig.ID), u[1]).Val()
			id, at, _ := strings.Cut(got, "|")
			ms, _ := strconv.ParseInt(at, 10, 64)
			if d := time.UnixMilli(ms).Sub(now); id != p.ID || d < -time.Minute || d > time.Minute {
				t.Fatalf("claim = %s (%v from Redis's clock), want %s's, dated by Redis", got, d, p.ID)
			}
			m, err := s.Marks(ctx, u[1], []string{orig.ID})
			feedOK(t, err)
			if !m[0].Reposted {
				t.Fatal("not marked reposted")
			}
		})
	}
}

// A home page shows a post and its plain reposts once, as the newest of
// them, and still has first posts; reposts with text are posts of their
// own.
func TestHomeFoldsPlainReposts(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			s, rdb := feedStore(t, feedConfig(mode))
			w := feedWorker(t, s, rdb)
			ctx := context.Background()
			u := feedUsers(t, s, 4)
			reader, a, b, c := u[0], u[1], u[2], u[3]
			for _, f := range []string{a, b, c} {
				feedOK(t, s.Follow(ctx, reader, f))
			}
			old := feedPost(t, s, a, social.NewPost{Content: "old"})
			x := feedPost(t, s, a, social.NewPost{Content: "x"})
			_, err := s.CreatePost(ctx, b, social.NewPost{RepostOf: x.ID})
			feedOK(t, err)
			q := feedPost(t, s, c, social.NewPost{Content: "quoting x", RepostOf: x.ID})
			r2, err := s.CreatePost(ctx, c, social.NewPost{RepostOf: x.ID})
			feedOK(t, err)
			drain(t, w)

			want := []string{r2.ID, q.ID, old.ID}
			if got := home(t, s, reader, 10); !slices.Equal(got, want) {
				t.Errorf("home = %v, want %v", got, want)
			}
			page, err := homeIDs(ctx, s, reader, social.PageRequest{First: 2})
			feedOK(t, err)
			if !slices.Equal(page.Items, want[:2]) || !page.HasNext {
				t.Errorf("first page of 2 = %+v", page)
			}
		})
	}
}

// A post's location and source are kept as given, cleaned, and checked.
func TestPostLocationAndSource(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 1)
	tests := []struct {
		name string
		loc  *social.Location
		src  string
		want *social.Location
		code social.Code
	}{
		{"none", nil, "", nil, ""},
		{"place", &social.Location{Latitude: 39.9042, Longitude: 116.4074, Name: " Beijing "}, "web", &social.Location{Latitude: 39.9042, Longitude: 116.4074, Name: "Beijing"}, ""},
		{"no name", &social.Location{Latitude: -90, Longitude: 180}, "ios", &social.Location{Latitude: -90, Longitude: 180}, ""},
		{"latitude", &social.Location{Latitude: 90.5}, "", nil, social.BadUserInput},
		{"longitude", &social.Location{Longitude: -181}, "", nil, social.BadUserInput},
		{"long source", nil, "a client with a far too long name for a source", nil, social.BadUserInput},
		{"control in source", nil, "we\x00b", nil, social.BadUserInput},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.CreatePost(ctx, u[0], social.NewPost{Content: "here", Location: tc.loc, Source: tc.src})
			if got := social.ErrorCode(err); got != tc.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tc.code)
			}
			if err != nil {
				return
			}
			got, err := s.VisiblePosts(ctx, u[0], []string{p.ID})
			feedOK(t, err)
			if (got[0].Location == nil) != (tc.want == nil) || (tc.want != nil && *got[0].Location != *tc.want) || got[0].Source != tc.src {
				t.Fatalf("stored %+v %+v, want %+v %q", got[0], got[0].Location, tc.want, tc.src)
			}
		})
	}
}

// A plain repost whose writer died after its hash, before its fan-out
// job, is published by the next request for it, not returned unpublished.
func TestPlainRepostFinishedByRetry(t *testing.T) {
	s, rdb := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	orig := feedPost(t, s, u[0], social.NewPost{})
	r, err := s.CreatePost(ctx, u[1], social.NewPost{RepostOf: orig.ID})
	feedOK(t, err)
	// Undo what publish did: the author's timeline and the link.
	feedOK(t, rdb.ZRem(ctx, s.Keys().UserPosts(u[1]), r.ID).Err())
	feedOK(t, rdb.SRem(ctx, s.Keys().PostReposts(orig.ID), r.ID).Err())
	again, err := s.CreatePost(ctx, u[1], social.NewPost{RepostOf: orig.ID})
	feedOK(t, err)
	if again.ID != r.ID {
		t.Fatalf("retry made %s, want %s", again.ID, r.ID)
	}
	if err := rdb.ZScore(ctx, s.Keys().UserPosts(u[1]), r.ID).Err(); err != nil {
		t.Fatalf("not in the author's timeline: %v", err)
	}
	if n := rdb.SCard(ctx, s.Keys().PostReposts(orig.ID)).Val(); n != 1 {
		t.Fatalf("reposts %d, want 1", n)
	}
}
