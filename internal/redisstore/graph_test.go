package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// graphStore returns a store over a fresh key prefix, and its client.
func graphStore(t *testing.T) (*redisstore.Store, redis.UniversalClient) {
	t.Helper()
	rdb := redistest.Client(t)
	return redisstore.New(rdb, redistest.Prefix(t)), rdb
}

// graphUsers creates n users and returns their ids.
func graphUsers(t testing.TB, s *redisstore.Store, n int) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range ids {
		name := fmt.Sprintf("g%d", i)
		u, err := s.CreateUser(context.Background(), social.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: "x"})
		if err != nil {
			t.Fatalf("create user: %v", err)
		}
		ids[i] = u.ID
	}
	return ids
}

func wantGraphCode(t *testing.T, err error, code social.Code) {
	t.Helper()
	if got := social.ErrorCode(err); got != code {
		t.Fatalf("error %v: code %q, want %q", err, got, code)
	}
}

// graphCounts returns followers and following counts of id.
func graphCounts(t *testing.T, s *redisstore.Store, id string) (followers, following int) {
	t.Helper()
	c, err := s.UserCounts(context.Background(), []string{id})
	if err != nil {
		t.Fatal(err)
	}
	return c[0].Followers, c[0].Following
}

// wantLists checks id's followers and following, counts and lists.
func wantLists(t *testing.T, s *redisstore.Store, id string, followers, following []string) {
	t.Helper()
	if f, g := graphCounts(t, s, id); f != len(followers) || g != len(following) {
		t.Errorf("user %s: counts %d/%d, want %d/%d", id, f, g, len(followers), len(following))
	}
	if got := allEdges(t, followersOf(s, id), 10); !slices.Equal(got, followers) {
		t.Errorf("followers of %s: %v, want %v", id, got, followers)
	}
	if got := allEdges(t, followingOf(s, id), 10); !slices.Equal(got, following) {
		t.Errorf("following of %s: %v, want %v", id, got, following)
	}
}

// allEdges pages through a list with pages of size first.
func allEdges(t *testing.T, list func(social.PageRequest) (social.Connection[string], error), first int) []string {
	t.Helper()
	var out []string
	p := social.PageRequest{First: first}
	for range 10000 {
		c, err := list(p)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Items) != len(c.Cursors) || len(c.Items) > first {
			t.Fatalf("page of %d items, %d cursors, first %d", len(c.Items), len(c.Cursors), first)
		}
		out = append(out, c.Items...)
		if !c.HasNext {
			return out
		}
		if p.After = c.EndCursor(); p.After == "" {
			t.Fatal("a next page without a cursor")
		}
	}
	t.Fatal("paging does not end")
	return nil
}

func followersOf(s *redisstore.Store, id string) func(social.PageRequest) (social.Connection[string], error) {
	return func(p social.PageRequest) (social.Connection[string], error) {
		return s.Followers(context.Background(), "", id, p)
	}
}

func followingOf(s *redisstore.Store, id string) func(social.PageRequest) (social.Connection[string], error) {
	return func(p social.PageRequest) (social.Connection[string], error) {
		return s.Following(context.Background(), "", id, p)
	}
}

type graphOp func(s *redisstore.Store, ctx context.Context, viewerID, userID string) error

var graphOps = []struct {
	name string
	op   graphOp
}{
	{"follow", (*redisstore.Store).Follow},
	{"unfollow", (*redisstore.Store).Unfollow},
	{"block", (*redisstore.Store).Block},
	{"unblock", (*redisstore.Store).Unblock},
	{"mute", (*redisstore.Store).Mute},
	{"unmute", (*redisstore.Store).Unmute},
}

func TestGraphEditErrors(t *testing.T) {
	s, _ := graphStore(t)
	ids := graphUsers(t, s, 2)
	ctx := context.Background()
	for _, o := range graphOps {
		for _, c := range []struct {
			name   string
			target string
			want   social.Code
		}{
			{"self", ids[0], social.BadUserInput},
			{"unknown user", "999999", social.NotFound},
			{"existing user", ids[1], ""},
			{"again", ids[1], ""},
		} {
			t.Run(o.name+"/"+c.name, func(t *testing.T) {
				wantGraphCode(t, o.op(s, ctx, ids[0], c.target), c.want)
			})
		}
	}
	// The unknown user got no keys.
	if n := redistest.Keys(t, s.Client(), s.Keys().User("999999")+"*"); len(n) != 0 {
		t.Fatalf("keys of an unknown user written: %v", n)
	}
}

func TestFollowForbiddenWhenBlocked(t *testing.T) {
	for _, c := range []struct {
		name             string
		blocker, blocked int
	}{
		{"viewer blocked the user", 0, 1},
		{"the user blocked the viewer", 1, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, _ := graphStore(t)
			ids := graphUsers(t, s, 2)
			ctx := context.Background()
			if err := s.Block(ctx, ids[c.blocker], ids[c.blocked]); err != nil {
				t.Fatal(err)
			}
			wantGraphCode(t, s.Follow(ctx, ids[0], ids[1]), social.Forbidden)
			wantGraphCode(t, s.Follow(ctx, ids[1], ids[0]), social.Forbidden)
			for _, id := range ids {
				if f, g := graphCounts(t, s, id); f != 0 || g != 0 {
					t.Fatalf("user %s: %d followers, %d following after a refused follow", id, f, g)
				}
			}
			// Unblocking lets follows happen again, and re-follows nobody.
			if err := s.Unblock(ctx, ids[c.blocker], ids[c.blocked]); err != nil {
				t.Fatal(err)
			}
			if f, g := graphCounts(t, s, ids[0]); f != 0 || g != 0 {
				t.Fatalf("unblock re-followed: %d followers, %d following", f, g)
			}
			if err := s.Follow(ctx, ids[0], ids[1]); err != nil {
				t.Fatalf("follow after unblock: %v", err)
			}
		})
	}
}

func TestBlockRemovesEdgesBothWays(t *testing.T) {
	s, _ := graphStore(t)
	ids := graphUsers(t, s, 3)
	a, b, c := ids[0], ids[1], ids[2]
	ctx := context.Background()
	for _, e := range [][2]string{{a, b}, {b, a}, {c, a}, {a, c}, {c, b}} {
		if err := s.Follow(ctx, e[0], e[1]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Block(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		id                   string
		followers, following []string
	}{
		{a, []string{c}, []string{c}},
		{b, []string{c}, nil},
		{c, []string{a}, []string{b, a}},
	} {
		wantLists(t, s, w.id, w.followers, w.following)
	}
	rel, err := s.Relations(ctx, a, []string{b})
	if err != nil {
		t.Fatal(err)
	}
	if rel[0] != (social.Relation{ViewerBlocked: true}) {
		t.Errorf("blocker's relation: %+v", rel[0])
	}
	rel, err = s.Relations(ctx, b, []string{a})
	if err != nil {
		t.Fatal(err)
	}
	if rel[0] != (social.Relation{BlockedViewer: true}) {
		t.Errorf("blocked user's relation: %+v", rel[0])
	}
}

func TestRelations(t *testing.T) {
	s, _ := graphStore(t)
	ids := graphUsers(t, s, 7)
	v := ids[0]
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Follow(ctx, v, ids[1]))
	must(s.Follow(ctx, ids[2], v))
	must(s.Follow(ctx, v, ids[3]))
	must(s.Follow(ctx, ids[3], v))
	must(s.Block(ctx, v, ids[4]))
	must(s.Block(ctx, ids[5], v))
	must(s.Mute(ctx, v, ids[6]))
	must(s.Mute(ctx, ids[1], v)) // v is not told

	want := []struct {
		name string
		id   string
		rel  social.Relation
	}{
		{"viewer follows", ids[1], social.Relation{ViewerFollows: true}},
		{"follows viewer", ids[2], social.Relation{FollowsViewer: true}},
		{"mutual", ids[3], social.Relation{ViewerFollows: true, FollowsViewer: true}},
		{"viewer blocked", ids[4], social.Relation{ViewerBlocked: true}},
		{"blocked viewer", ids[5], social.Relation{BlockedViewer: true}},
		{"viewer muted", ids[6], social.Relation{ViewerMuted: true}},
		{"self", v, social.Relation{}},
		{"unknown", "999999", social.Relation{}},
	}
	batch := make([]string, len(want))
	for i, w := range want {
		batch[i] = w.id
	}
	got, err := s.Relations(ctx, v, batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, w := range want {
		t.Run(w.name, func(t *testing.T) {
			if got[i] != w.rel {
				t.Errorf("relation to %s: %+v, want %+v", w.id, got[i], w.rel)
			}
		})
	}
	if got, err := s.Relations(ctx, v, nil); err != nil || len(got) != 0 {
		t.Errorf("empty batch: %v, %v", got, err)
	}
	must(s.Unmute(ctx, v, ids[6]))
	must(s.Unblock(ctx, v, ids[4]))
	must(s.Unfollow(ctx, v, ids[3]))
	got, err = s.Relations(ctx, v, []string{ids[6], ids[4], ids[3]})
	must(err)
	if want := []social.Relation{{}, {}, {FollowsViewer: true}}; !slices.Equal(got, want) {
		t.Errorf("after undoing: %+v, want %+v", got, want)
	}
}

func TestUserCounts(t *testing.T) {
	s, rdb := graphStore(t)
	ids := graphUsers(t, s, 3)
	ctx := context.Background()
	for _, e := range [][2]string{{ids[0], ids[1]}, {ids[2], ids[1]}, {ids[1], ids[0]}} {
		if err := s.Follow(ctx, e[0], e[1]); err != nil {
			t.Fatal(err)
		}
	}
	// Posts are the size of the user's own timeline, filled by the posts code.
	rdb.ZAdd(ctx, s.Keys().UserPosts(ids[1]), redis.Z{Score: 1, Member: "1"}, redis.Z{Score: 2, Member: "2"})
	got, err := s.UserCounts(ctx, []string{ids[0], ids[1], ids[2], "999999"})
	if err != nil {
		t.Fatal(err)
	}
	want := []social.UserCounts{{Followers: 1, Following: 1}, {Followers: 2, Following: 1, Posts: 2}, {Following: 1}, {}}
	if !slices.Equal(got, want) {
		t.Fatalf("counts %+v, want %+v", got, want)
	}
}

func TestFollowKeepsFirstTime(t *testing.T) {
	s, rdb := graphStore(t)
	ids := graphUsers(t, s, 3)
	ctx := context.Background()
	a, b, c := ids[0], ids[1], ids[2]
	now := time.Now()
	s.SetClock(func() time.Time { return now })
	if err := s.Follow(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	first := rdb.ZScore(ctx, s.Keys().Following(a), b).Val()
	// A later follow of c, then b again, later still: b keeps its first
	// time, so its place behind c.
	rdb.ZAdd(ctx, s.Keys().Following(a), redis.Z{Score: first + 1, Member: c})
	now = now.Add(time.Second)
	if err := s.Follow(ctx, a, b); err != nil {
		t.Fatal(err)
	}
	if got := rdb.ZScore(ctx, s.Keys().Following(a), b).Val(); got != first {
		t.Fatalf("follow time changed from %v to %v", first, got)
	}
	if got := rdb.ZScore(ctx, s.Keys().Followers(b), a).Val(); got != first {
		t.Fatalf("follower time %v, want %v", got, first)
	}
	if got := allEdges(t, followingOf(s, a), 5); !slices.Equal(got, []string{c, b}) {
		t.Fatalf("following %v", got)
	}
}

// lostReplies makes every script call run twice, as when go-redis resends
// a command whose reply was lost: the first run's reply is dropped.
type lostReplies struct{ n atomic.Int64 }

func (*lostReplies) DialHook(next redis.DialHook) redis.DialHook { return next }
func (*lostReplies) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (h *lostReplies) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n == "evalsha" || n == "eval" {
			h.n.Add(1)
			_ = next(ctx, cmd)
		}
		return next(ctx, cmd)
	}
}

func TestGraphEditsSurviveLostReplies(t *testing.T) {
	// Two stores over the same keys: s runs every script twice, plain
	// reads what that left.
	prefix := redistest.Prefix(t)
	plain := redisstore.New(redistest.Client(t), prefix)
	rdb := redistest.Client(t)
	h := &lostReplies{}
	rdb.AddHook(h)
	s := redisstore.New(rdb, prefix)
	ids := graphUsers(t, plain, 4)
	a, b, c, d := ids[0], ids[1], ids[2], ids[3]
	ctx := context.Background()
	steps := []struct {
		name string
		op   graphOp
		v, u string
	}{
		{"a follows b", (*redisstore.Store).Follow, a, b},
		{"a follows c", (*redisstore.Store).Follow, a, c},
		{"c follows a", (*redisstore.Store).Follow, c, a},
		{"d follows a", (*redisstore.Store).Follow, d, a},
		{"a follows d", (*redisstore.Store).Follow, a, d},
		{"a unfollows c", (*redisstore.Store).Unfollow, a, c},
		{"a blocks d", (*redisstore.Store).Block, a, d},
		{"a mutes b", (*redisstore.Store).Mute, a, b},
		{"b blocks c", (*redisstore.Store).Block, b, c},
		{"b unblocks c", (*redisstore.Store).Unblock, b, c},
	}
	for _, st := range steps {
		if err := st.op(s, ctx, st.v, st.u); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
	}
	if h.n.Load() < int64(len(steps)) {
		t.Fatalf("only %d script calls were repeated", h.n.Load())
	}
	for _, w := range []struct {
		id                   string
		followers, following []string
	}{
		{a, []string{c}, []string{b}},
		{b, []string{a}, nil},
		{c, nil, []string{a}},
		{d, nil, nil},
	} {
		wantLists(t, plain, w.id, w.followers, w.following)
	}
	rel, err := plain.Relations(ctx, a, []string{b, d})
	if err != nil {
		t.Fatal(err)
	}
	if want := []social.Relation{{ViewerFollows: true, ViewerMuted: true}, {ViewerBlocked: true}}; !slices.Equal(rel, want) {
		t.Errorf("relations %+v, want %+v", rel, want)
	}
}

func TestFollowConcurrently(t *testing.T) {
	s, _ := graphStore(t)
	ids := graphUsers(t, s, 102)
	star, fan := ids[0], ids[1]
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make(chan error, 150)
	// 100 users follow one user at once, and one of them 50 times more.
	for _, id := range ids[1:101] {
		wg.Go(func() {
			if err := s.Follow(ctx, id, star); err != nil {
				errs <- err
			}
		})
	}
	for range 50 {
		wg.Go(func() {
			if err := s.Follow(ctx, fan, star); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if f, _ := graphCounts(t, s, star); f != 100 {
		t.Fatalf("followers %d, want 100", f)
	}
	if _, g := graphCounts(t, s, fan); g != 1 {
		t.Fatalf("following of the repeated follower %d, want 1", g)
	}
	if got := allEdges(t, followersOf(s, star), 100); len(got) != 100 {
		t.Fatalf("list holds %d followers", len(got))
	}
}

// A block racing a follow the other way never leaves an edge: either the
// follow comes first and the block removes it, or it is refused.
func TestBlockRacingFollow(t *testing.T) {
	s, _ := graphStore(t)
	ids := graphUsers(t, s, 2)
	a, b := ids[0], ids[1]
	ctx := context.Background()
	for range 30 {
		var wg sync.WaitGroup
		wg.Go(func() {
			if err := s.Follow(ctx, b, a); err != nil && !social.IsCode(err, social.Forbidden) {
				t.Error(err)
			}
		})
		wg.Go(func() {
			if err := s.Block(ctx, a, b); err != nil {
				t.Error(err)
			}
		})
		wg.Wait()
		if f, _ := graphCounts(t, s, a); f != 0 {
			t.Fatalf("blocked user still follows: %d followers", f)
		}
		if err := s.Unblock(ctx, a, b); err != nil {
			t.Fatal(err)
		}
	}
}

// zent is a zset entry of the paging oracle.
type zent struct {
	member string
	score  float64
}

// newestFirst is Redis's ZRANGE ... REV order: score, then member bytes,
// both descending.
func newestFirst(a, b zent) int {
	if a.score != b.score {
		if a.score > b.score {
			return -1
		}
		return 1
	}
	if a.member > b.member {
		return -1
	}
	if a.member < b.member {
		return 1
	}
	return 0
}

// edgesAfter returns the members of set strictly after the cursor, in order.
func edgesAfter(set map[string]float64, cursor string) []string {
	var es []zent
	for m, sc := range set {
		es = append(es, zent{m, sc})
	}
	slices.SortFunc(es, newestFirst)
	var pos *zent
	if cursor != "" {
		parts, _ := social.DecodeCursor(cursor, 2)
		f, _ := strconv.ParseFloat(parts[0], 64)
		pos = &zent{parts[1], f}
	}
	var out []string
	for _, e := range es {
		if pos == nil || newestFirst(e, *pos) > 0 {
			out = append(out, e.member)
		}
	}
	return out
}

// TestEdgePagingMatchesRedisOrder pages through zsets full of equal scores
// and ids of different lengths, where Redis orders ties by bytes ("9" >
// "10" > "1").
func TestEdgePagingMatchesRedisOrder(t *testing.T) {
	s, rdb := graphStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, c := range []struct {
		name   string
		n      int
		scores int // distinct scores to draw from
	}{
		{"empty", 0, 1},
		{"one", 1, 1},
		{"all ties", 40, 1},
		{"many ties", 60, 4},
		{"distinct", 30, 1 << 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			user := "page-" + c.name
			key := s.Keys().Followers(user)
			set := map[string]float64{}
			for len(set) < c.n {
				m := strconv.Itoa(rng.IntN(2000))
				set[m] = float64(1_700_000_000_000 + rng.IntN(c.scores))
				rdb.ZAdd(ctx, key, redis.Z{Score: set[m], Member: m})
			}
			want := edgesAfter(set, "")
			for _, first := range []int{1, 2, 3, 7, 100} {
				got := allEdges(t, followersOf(s, user), first)
				if !slices.Equal(got, want) {
					t.Fatalf("first %d: %v\nwant %v", first, got, want)
				}
			}
			conn, err := s.Followers(ctx, "", user, social.PageRequest{First: 5})
			if err != nil {
				t.Fatal(err)
			}
			if conn.Total != c.n || conn.HasNext != (c.n > 5) {
				t.Fatalf("total %d, hasNext %v", conn.Total, conn.HasNext)
			}
		})
	}
}

// TestEdgePagingUnderChanges changes the list between every two pages
// (adds, removes, re-scores, the cursor's own entry included) and checks
// each page against the oracle: the entries now in the list that come
// strictly after the cursor.
func TestEdgePagingUnderChanges(t *testing.T) {
	s, rdb := graphStore(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 20 {
		user := fmt.Sprintf("churn%d", round)
		key := s.Keys().Followers(user)
		set := map[string]float64{}
		add := func(m string, sc float64) {
			set[m] = sc
			rdb.ZAdd(ctx, key, redis.Z{Score: sc, Member: m})
		}
		for range 30 {
			add(strconv.Itoa(rng.IntN(300)), float64(rng.IntN(6)))
		}
		p := social.PageRequest{First: 1 + rng.IntN(4)}
		for range 100 {
			c, err := s.Followers(ctx, "", user, p)
			if err != nil {
				t.Fatal(err)
			}
			want := edgesAfter(set, p.After)
			if n := min(len(want), p.First); !slices.Equal(c.Items, want[:n]) || c.HasNext != (len(want) > n) || c.Total != len(set) {
				t.Fatalf("round %d: page %v (hasNext %v, total %d), want %v of %v", round, c.Items, c.HasNext, c.Total, want[:n], want)
			}
			if !c.HasNext {
				break
			}
			p.After = c.Cursors[len(c.Cursors)-1]
			last := c.Items[len(c.Items)-1]
			switch rng.IntN(4) {
			case 0: // the cursor's entry leaves
				delete(set, last)
				rdb.ZRem(ctx, key, last)
			case 1: // the cursor's entry comes back later
				add(last, 10)
			case 2: // another entry leaves
				for m := range set {
					delete(set, m)
					rdb.ZRem(ctx, key, m)
					break
				}
			}
			add(strconv.Itoa(rng.IntN(300)), float64(rng.IntN(12)))
		}
	}
}

// TestFollowersPagingWithConcurrentFollows pages through a user's followers
// while other users follow and unfollow them: every follower that stayed
// appears exactly once.
func TestFollowersPagingWithConcurrentFollows(t *testing.T) {
	s, _ := graphStore(t)
	ids := graphUsers(t, s, 61)
	star, stable, churn := ids[0], ids[1:31], ids[31:]
	ctx := context.Background()
	for _, id := range ids[1:] {
		if err := s.Follow(ctx, id, star); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			id := churn[i%len(churn)]
			var err error
			if i%3 == 0 {
				err = s.Unfollow(ctx, id, star)
			} else {
				err = s.Follow(ctx, id, star)
			}
			if err != nil {
				t.Error(err)
				return
			}
		}
	})
	seen := map[string]int{}
	for range 3 {
		clear(seen)
		for _, id := range allEdges(t, followersOf(s, star), 2) {
			seen[id]++
		}
		for _, id := range stable {
			if seen[id] != 1 {
				t.Errorf("stable follower %s seen %d times", id, seen[id])
			}
		}
		for id, n := range seen {
			if n != 1 {
				t.Errorf("follower %s seen %d times", id, n)
			}
		}
	}
	close(done)
	wg.Wait()
}

func TestPagingBadInput(t *testing.T) {
	s, _ := graphStore(t)
	ids := graphUsers(t, s, 2)
	ctx := context.Background()
	for _, c := range []struct {
		name string
		p    social.PageRequest
	}{
		{"first 0", social.PageRequest{First: 0}},
		{"first 101", social.PageRequest{First: 101}},
		{"not base64", social.PageRequest{First: 1, After: "!!"}},
		{"no prefix", social.PageRequest{First: 1, After: "MTox"}},
		{"one part", social.PageRequest{First: 1, After: social.EncodeCursor("1")}},
		{"score not a number", social.PageRequest{First: 1, After: social.EncodeCursor("x", "1")}},
		{"score NaN", social.PageRequest{First: 1, After: social.EncodeCursor("NaN", "1")}},
		{"score infinite", social.PageRequest{First: 1, After: social.EncodeCursor("1e999", "1")}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := s.Followers(ctx, "", ids[0], c.p)
			wantGraphCode(t, err, social.BadUserInput)
			_, err = s.Following(ctx, "", ids[0], c.p)
			wantGraphCode(t, err, social.BadUserInput)
			_, err = s.CommonFollowing(ctx, ids[0], ids[1], c.p)
			wantGraphCode(t, err, social.BadUserInput)
		})
	}
}

func TestCommonFollowing(t *testing.T) {
	s, rdb := graphStore(t)
	ids := graphUsers(t, s, 3)
	a, b, loner := ids[0], ids[1], ids[2]
	ctx := context.Background()
	// a follows 1000 users (ties: 3 per millisecond); b follows every 7th
	// of them, and others. The lists need not hold existing users.
	mine := map[string]float64{}
	var theirs []redis.Z
	for i := range 1000 {
		m := strconv.Itoa(100000 + i)
		mine[m] = float64(1_700_000_000_000 + i/3)
		rdb.ZAdd(ctx, s.Keys().Following(a), redis.Z{Score: mine[m], Member: m})
		if i%7 == 0 {
			theirs = append(theirs, redis.Z{Score: float64(i), Member: m})
		}
	}
	theirs = append(theirs, redis.Z{Score: 1, Member: "5"}, redis.Z{Score: 2, Member: "6"})
	rdb.ZAdd(ctx, s.Keys().Following(b), theirs...)
	var want []string
	for _, m := range edgesAfter(mine, "") {
		if n, _ := strconv.Atoi(m); (n-100000)%7 == 0 {
			want = append(want, m)
		}
	}
	common := func(other string) func(social.PageRequest) (social.Connection[string], error) {
		return func(p social.PageRequest) (social.Connection[string], error) {
			return s.CommonFollowing(ctx, a, other, p)
		}
	}
	for _, first := range []int{1, 9, 100} {
		if got := allEdges(t, common(b), first); !slices.Equal(got, want) {
			t.Fatalf("first %d: %d users %v\nwant %d %v", first, len(got), got, len(want), want)
		}
	}
	c, err := s.CommonFollowing(ctx, a, b, social.PageRequest{First: 3})
	if err != nil || c.Total != len(want) || !c.HasNext {
		t.Fatalf("total %d, hasNext %v, err %v; want total %d", c.Total, c.HasNext, err, len(want))
	}
	// The tail of a long list: only the last chunk holds matches.
	rdb.ZAdd(ctx, s.Keys().Following(loner), redis.Z{Score: 1, Member: want[len(want)-1]})
	if got := allEdges(t, common(loner), 5); !slices.Equal(got, want[len(want)-1:]) {
		t.Fatalf("sparse intersection: %v", got)
	}
	c, err = s.CommonFollowing(ctx, b, loner, social.PageRequest{First: 5})
	if err != nil || len(c.Items) != 1 || c.Total != 1 || c.HasNext {
		t.Fatalf("b and loner: %+v, %v", c, err)
	}
	_, err = s.CommonFollowing(ctx, a, "999999", social.PageRequest{First: 5})
	wantGraphCode(t, err, social.NotFound)
}

// zmscoreCounter counts the members sent in ZMSCOREs against one key: the
// candidates a common-following walk checks against the other user's list.
type zmscoreCounter struct {
	key string
	n   atomic.Int64
}

func (c *zmscoreCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (c *zmscoreCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error { c.count(cmd); return next(ctx, cmd) }
}
func (c *zmscoreCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			c.count(cmd)
		}
		return next(ctx, cmds)
	}
}
func (c *zmscoreCounter) count(cmd redis.Cmder) {
	if a := cmd.Args(); len(a) > 2 && strings.EqualFold(fmt.Sprint(a[0]), "zmscore") && a[1] == c.key {
		c.n.Add(int64(len(a) - 2))
	}
}

// TestCommonFollowingBounds: a page of common following reads at most a
// fixed number of candidates of the user's list, whatever the lengths of
// the two lists (at most the first chunk and the read budget when the
// operation has one); a page stopped by its bounds ends with HasNext and
// a cursor; paging on finds every common user once, in order, with the
// same total on every page. The total is exact when the shorter list
// holds at most CommonSample users, an estimate near the true figure
// otherwise.
func TestCommonFollowingBounds(t *testing.T) {
	tests := []struct {
		name          string
		mine, theirs  int              // lengths of the two following lists
		shared        func(i int) bool // whether the user's i-th follow (oldest first) is in the other's list
		first, budget int              // budget 0: the operation has none
		estimate      bool             // the total is an estimate, within a tenth
		sparse        bool             // pages end at their bounds, more than once
	}{
		{"short lists", 600, 400, func(i int) bool { return i%3 == 0 }, 7, 0, false, false},
		{"the other's list the shorter and short", 12000, 300, func(i int) bool { return i%100 == 0 }, 5, 0, false, false},
		{"sparse, long lists", 12000, 12000, func(i int) bool { return i%1500 == 0 }, 5, 0, true, true},
		{"sparse, long lists, with a budget", 12000, 12000, func(i int) bool { return i%1500 == 0 }, 5, 300, true, true},
		{"a random third shared", 6000, 5000, func(i int) bool { return rand.New(rand.NewPCG(uint64(i), 7)).IntN(3) == 0 }, 100, 0, true, false},
		{"none shared", 9000, 9000, func(int) bool { return false }, 20, 500, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, rdb := graphStore(t)
			ids := graphUsers(t, s, 2)
			a, b := ids[0], ids[1]
			ctx := context.Background()
			mine := map[string]float64{}
			var mz, tz []redis.Z
			for i := range tt.mine {
				m := strconv.Itoa(100000 + i)
				mine[m] = float64(1_700_000_000_000 + i/3) // ties: 3 a millisecond
				mz = append(mz, redis.Z{Score: mine[m], Member: m})
				if tt.shared(i) && len(tz) < tt.theirs {
					tz = append(tz, redis.Z{Score: float64(i), Member: m})
				}
			}
			for i := len(tz); i < tt.theirs; i++ {
				tz = append(tz, redis.Z{Score: float64(i), Member: strconv.Itoa(900000 + i)})
			}
			for _, z := range []struct {
				key string
				zs  []redis.Z
			}{{s.Keys().Following(a), mz}, {s.Keys().Following(b), tz}} {
				for i := 0; i < len(z.zs); i += 1000 {
					if err := rdb.ZAdd(ctx, z.key, z.zs[i:min(i+1000, len(z.zs))]...).Err(); err != nil {
						t.Fatal(err)
					}
				}
			}
			theirs := map[string]bool{}
			for _, z := range tz {
				theirs[z.Member.(string)] = true
			}
			var want []string
			for _, m := range edgesAfter(mine, "") {
				if theirs[m] {
					want = append(want, m)
				}
			}
			cnt := &zmscoreCounter{key: s.Keys().Following(b)}
			rdb.AddHook(cnt)
			bound := int64(redisstore.CommonWalkMax)
			if tt.budget > 0 {
				bound = int64(redisstore.CommonChunk + tt.budget)
			}
			if redistest.ClusterMode() {
				bound += redisstore.CommonSample // the total's sample of the user's list
			}
			var got []string
			total, pages, cut := -1, 0, 0
			p := social.PageRequest{First: tt.first}
			for {
				if pages++; pages > 1000 {
					t.Fatal("paging does not end")
				}
				octx := ctx
				if tt.budget > 0 {
					octx = social.WithReadBudget(ctx, tt.budget)
				}
				before := cnt.n.Load()
				c, err := s.CommonFollowing(octx, a, b, p)
				if err != nil {
					t.Fatal(err)
				}
				if n := cnt.n.Load() - before; n > bound {
					t.Fatalf("page %d checked %d candidates, more than %d", pages, n, bound)
				}
				if total != -1 && c.Total != total {
					t.Fatalf("page %d: total %d, the first page said %d", pages, c.Total, total)
				}
				total = c.Total
				if c.End != "" {
					cut++
				}
				got = append(got, c.Items...)
				if !c.HasNext {
					break
				}
				if p.After = c.EndCursor(); p.After == "" {
					t.Fatalf("page %d: a next page without a cursor", pages)
				}
			}
			if !slices.Equal(got, want) {
				t.Fatalf("paged %d users %v\nwant %d %v", len(got), got, len(want), want)
			}
			// A long sparse walk is cut into several pages.
			if least := (tt.mine - redisstore.CommonChunk) / int(bound); tt.sparse && cut < least {
				t.Errorf("%d pages ended at their bounds, want at least %d", cut, least)
			}
			t.Logf("%d common users, total %d, %d pages, %d ended at their bounds", len(want), total, pages, cut)
			switch {
			case !tt.estimate && total != len(want):
				t.Errorf("total %d, want %d", total, len(want))
			case tt.estimate && (total < 0 || total > min(tt.mine, tt.theirs)):
				t.Errorf("total %d, out of 0..%d", total, min(tt.mine, tt.theirs))
			case tt.estimate && len(want) > 1000 && (total < len(want)*9/10 || total > len(want)*11/10):
				t.Errorf("total %d, want within a tenth of %d", total, len(want))
			}
		})
	}
}

// TestCommonFollowingAliasesShareTheTotal: pages of the same two users in
// one batch (aliases with other sizes) read the sampled total once, and
// each pays for its first chunk past first + 1 from the operation's read
// budget; once the budget is spent, a page reads first + 1 and a
// distinct pair's total one run, and the pages are still right.
func TestCommonFollowingAliasesShareTheTotal(t *testing.T) {
	s, rdb := graphStore(t)
	ids := graphUsers(t, s, 3)
	a, b, c := ids[0], ids[1], ids[2]
	ctx := context.Background()
	// a follows 3 000 users; b and c follow every other one of them, so
	// the first chunk fills each page.
	var mz, tz []redis.Z
	for i := range 3000 {
		m := strconv.Itoa(100000 + i)
		mz = append(mz, redis.Z{Score: float64(1_700_000_000_000 + i), Member: m})
		if i%2 == 0 {
			tz = append(tz, redis.Z{Score: float64(i), Member: m})
		}
	}
	rdb.ZAdd(ctx, s.Keys().Following(a), mz...)
	rdb.ZAdd(ctx, s.Keys().Following(b), tz...)
	rdb.ZAdd(ctx, s.Keys().Following(c), tz...)
	key := func(with string, first int) readplan.ListKey {
		return readplan.ListKey{List: readplan.ListCommonFollowing, Parent: a, With: with, Page: social.PageRequest{First: first}}
	}
	tests := []struct {
		name   string
		budget int
		keys   []readplan.ListKey
		left   int
	}{
		// One total (1 024) and three chunks past first + 1 (250, 249, 248).
		{"one pair", 2000, []readplan.ListKey{key(b, 5), key(b, 6), key(b, 7)}, 2000 - 1024 - 250 - 249 - 248},
		// Two pairs: the first's chunk and total spend the budget; the
		// second page reads first + 1 and its total one run.
		{"budget spent", 1200, []readplan.ListKey{key(b, 5), key(c, 5)}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bctx := social.WithReadBudget(ctx, tt.budget)
			pages, errs := s.TimelineService.ListPages(bctx, "", tt.keys)
			for i, k := range tt.keys {
				if errs[i] != nil {
					t.Fatalf("page %d: %v", i, errs[i])
				}
				// A page whose budget ran out may end short, with where to
				// go on from.
				got := pages[i].Users
				full := len(got.Items) == k.Page.First || (got.HasNext && got.End != "" && len(got.Items) < k.Page.First)
				if !full || got.Total < 1400 || got.Total > 1600 {
					t.Errorf("page %d: %d users (next %v, end %q), total %d; want %d or a short page to go on from, total about 1 500",
						i, len(got.Items), got.HasNext, got.End, got.Total, k.Page.First)
				}
			}
			want := tt.left
			if redistest.ClusterMode() {
				// The total samples the user's list, then, the other's
				// being the shorter, that one too: 1 024 more.
				want = max(0, want-redisstore.CommonSample)
			}
			if left := social.ReadBudgetLeft(bctx); left != want {
				t.Errorf("budget left %d, want %d", left, want)
			}
		})
	}
}
