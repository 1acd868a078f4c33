package redisstore_test

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
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

	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// feedWorker returns a fan-out worker of s's stream, run by drain.
func feedWorker(tb testing.TB, s *redisstore.Store, rdb redis.UniversalClient) *fanout.Worker {
	tb.Helper()
	w, err := fanout.New(rdb, fanout.Config{
		Stream: s.Keys().FanoutStream(), Dead: s.Keys().FanoutDead(), Consumer: "test", MinIdle: time.Minute,
	}, s.HandleFanoutJob, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// drain handles every queued fan-out job.
func drain(tb testing.TB, w *fanout.Worker) {
	tb.Helper()
	if _, err := w.Drain(context.Background()); err != nil {
		tb.Fatal(err)
	}
	if st := w.Stats(); st.Failed > 0 {
		tb.Fatalf("fan-out jobs failed: %+v", st)
	}
}

// feedConfig is the default configuration in a given mode.
func feedConfig(mode redisstore.FeedMode) redisstore.FeedConfig {
	c := redisstore.DefaultFeed()
	c.Mode = mode
	return c
}

var modes = []redisstore.FeedMode{redisstore.Push, redisstore.Pull, redisstore.Hybrid}

// allPages reads a whole timeline, first posts a page, and checks that the
// pages are full and that no post repeats.
func allPages(tb testing.TB, first int, page func(social.PageRequest) (social.Connection[string], error)) []string {
	tb.Helper()
	var got []string
	seen := map[string]bool{}
	after := ""
	for n := 0; ; n++ {
		if n > 1000 {
			tb.Fatal("too many pages")
		}
		c, err := page(social.PageRequest{First: first, After: after})
		if err != nil {
			tb.Fatalf("page %d: %v", n, err)
		}
		for _, id := range c.Items {
			if seen[id] {
				tb.Fatalf("page %d repeats post %s", n, id)
			}
			seen[id] = true
		}
		got = append(got, c.Items...)
		if !c.HasNext {
			return got
		}
		if len(c.Items) != first && c.End == "" {
			tb.Fatalf("page %d has %d posts, want %d (HasNext set, no End cursor)", n, len(c.Items), first)
		}
		after = c.EndCursor()
	}
}

func home(tb testing.TB, s *redisstore.Store, viewer string, first int) []string {
	tb.Helper()
	return allPages(tb, first, func(p social.PageRequest) (social.Connection[string], error) {
		return homeIDs(context.Background(), s, viewer, p)
	})
}

// byNewest sorts post ids newest first.
func byNewest(ids []string) []string {
	slices.SortFunc(ids, func(a, b string) int {
		x, _ := strconv.Atoi(a)
		y, _ := strconv.Atoi(b)
		return y - x
	})
	return ids
}

func TestHomeTimelineGraphChanges(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			s, rdb := feedStore(t, feedConfig(mode))
			w := feedWorker(t, s, rdb)
			ctx := context.Background()
			u := feedUsers(t, s, 4)
			me, a, b, c := u[0], u[1], u[2], u[3]
			pa := feedPost(t, s, a, social.NewPost{}).ID // before the follow: backfilled
			feedOK(t, s.Follow(ctx, me, a))
			feedOK(t, s.Follow(ctx, me, b))
			feedOK(t, s.Follow(ctx, me, c))
			pb := feedPost(t, s, b, social.NewPost{}).ID
			pc := feedPost(t, s, c, social.NewPost{}).ID
			pm := feedPost(t, s, me, social.NewPost{}).ID
			hidden := feedPost(t, s, a, social.NewPost{NotTo: []string{me}}).ID
			drain(t, w)
			steps := []struct {
				name string
				do   func() error
				want []string
			}{
				{"all", func() error { return nil }, []string{pm, pc, pb, pa}},
				{"unfollow c", func() error { return s.Unfollow(ctx, me, c) }, []string{pm, pb, pa}},
				{"mute b", func() error { return s.Mute(ctx, me, b) }, []string{pm, pa}},
				{"follow c again", func() error { return s.Follow(ctx, me, c) }, []string{pm, pc, pa}},
				{"a blocks me", func() error { return s.Block(ctx, a, me) }, []string{pm, pc}},
				{"unmute b, who posts", func() error {
					feedOK(t, s.Unmute(ctx, me, b))
					feedPost(t, s, b, social.NewPost{Content: "late"})
					return nil
				}, nil},
			}
			for _, st := range steps {
				feedOK(t, st.do())
				drain(t, w)
				got := home(t, s, me, 2)
				if st.want == nil {
					// Whether b's posts from before the mute come back
					// depends on the unmute hook (see afterUnmute).
					got = slices.DeleteFunc(got, func(id string) bool { return id == pb })
					if len(got) != 3 || got[1] != pm || got[2] != pc {
						t.Fatalf("%s: home = %v", st.name, got)
					}
					continue
				}
				if fmt.Sprint(got) != fmt.Sprint(st.want) {
					t.Fatalf("%s: home = %v, want %v", st.name, got, st.want)
				}
			}
			_ = hidden
			// Removal is real, not only filtered at read time: a's posts left
			// the list when a blocked me.
			list, err := rdb.LRange(ctx, s.Keys().Home(me), 0, -1).Result()
			feedOK(t, err)
			for _, e := range list {
				if e == pa+":"+a {
					t.Fatalf("blocked author's post still in the list: %v", list)
				}
			}
		})
	}
}

// scenario is a random social network and its posts, applied to one store.
type scenario struct {
	users   int
	follows [][2]int
	blocks  [][2]int
	mutes   [][2]int
	posts   []scenarioPost
	deletes []int // indexes into posts
}

type scenarioPost struct {
	author        int
	onlyTo, notTo []int
	repostOf      int // index+1 into posts; 0: none
}

func randomScenario(rng *rand.Rand, users, posts int) scenario {
	sc := scenario{users: users}
	pair := func() [2]int {
		a := rng.IntN(users)
		b := (a + 1 + rng.IntN(users-1)) % users
		return [2]int{a, b}
	}
	for i := 0; i < users*4; i++ {
		sc.follows = append(sc.follows, pair())
	}
	for i := 0; i < users/3; i++ {
		sc.blocks = append(sc.blocks, pair())
	}
	for i := 0; i < users/3; i++ {
		sc.mutes = append(sc.mutes, pair())
	}
	some := func() []int {
		var out []int
		for i := 0; i < 1+rng.IntN(3); i++ {
			out = append(out, rng.IntN(users))
		}
		return out
	}
	for i := 0; i < posts; i++ {
		p := scenarioPost{author: rng.IntN(users)}
		switch rng.IntN(5) {
		case 0:
			p.onlyTo = some()
		case 1:
			p.notTo = some()
		}
		if i > 0 && rng.IntN(6) == 0 {
			// A repost has its original's audience (and an ONLY_TO
			// original's author is in it).
			p.repostOf = 1 + rng.IntN(i)
			o := sc.posts[p.repostOf-1]
			p.onlyTo, p.notTo = o.onlyTo, o.notTo
			if o.onlyTo != nil {
				p.onlyTo = append(slices.Clip(o.onlyTo), o.author)
			}
		}
		sc.posts = append(sc.posts, p)
	}
	for i := 0; i < posts/10; i++ {
		sc.deletes = append(sc.deletes, rng.IntN(posts))
	}
	return sc
}

// applied is a scenario written to a store.
type applied struct {
	s       *redisstore.Store
	users   []string
	posts   []string // "" when the write was refused (repost of a hidden post)
	deleted map[string]bool
}

// apply writes the scenario in an interleaving order: graph changes, then
// posts, then more graph changes and deletions, draining the queue when
// drainEvery posts were written.
func (sc scenario) apply(tb testing.TB, s *redisstore.Store, w *fanout.Worker) *applied {
	tb.Helper()
	ctx := context.Background()
	a := &applied{s: s, users: feedUsers(tb, s, sc.users), deleted: map[string]bool{}}
	id := func(i int) string { return a.users[i] }
	ids := func(is []int) []string {
		var out []string
		for _, i := range is {
			out = append(out, id(i))
		}
		return out
	}
	half := len(sc.follows) / 2
	for _, f := range sc.follows[:half] {
		_ = s.Follow(ctx, id(f[0]), id(f[1])) // FORBIDDEN after a block: fine
	}
	for i, p := range sc.posts {
		in := social.NewPost{Content: fmt.Sprint("post ", i), OnlyTo: ids(p.onlyTo), NotTo: ids(p.notTo)}
		if p.repostOf > 0 {
			in.OnlyTo, in.NotTo = nil, nil // the original's
			in.RepostOf = a.posts[p.repostOf-1]
			if in.RepostOf == "" {
				in.RepostOf = "999999999"
			}
		}
		post, err := s.CreatePost(ctx, id(p.author), in)
		switch {
		case err == nil:
			a.posts = append(a.posts, post.ID)
		case social.IsCode(err, social.NotFound), social.IsCode(err, social.Forbidden):
			a.posts = append(a.posts, "")
		default:
			tb.Fatalf("post %d: %v", i, err)
		}
		switch i {
		case len(sc.posts) / 3:
			for _, b := range sc.blocks {
				feedOK(tb, s.Block(ctx, id(b[0]), id(b[1])))
			}
			drain(tb, w)
		case len(sc.posts) / 2:
			for _, f := range sc.follows[half:] {
				_ = s.Follow(ctx, id(f[0]), id(f[1]))
			}
			for _, m := range sc.mutes {
				feedOK(tb, s.Mute(ctx, id(m[0]), id(m[1])))
			}
		}
	}
	for _, d := range sc.deletes {
		p := a.posts[d]
		if p == "" || a.deleted[p] {
			continue
		}
		feedOK(tb, s.DeletePost(ctx, id(sc.posts[d].author), p))
		a.deleted[p] = true
	}
	drain(tb, w)
	return a
}

func TestFanoutModesGiveSamePages(t *testing.T) {
	sc := randomScenario(rand.New(rand.NewPCG(7, 11)), 12, 90)
	var first []string // every user's home timeline, under the first mode
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			cfg := feedConfig(mode)
			cfg.HomeCap = 12 // pages beyond the cap too
			cfg.CelebrityThreshold = 3
			s, rdb := feedStore(t, cfg)
			a := sc.apply(t, s, feedWorker(t, s, rdb))
			var got []string
			for i, u := range a.users {
				got = append(got, fmt.Sprint(i, ": ", normalize(a, home(t, s, u, 5))))
			}
			if first == nil {
				first = got
				return
			}
			for i := range got {
				if got[i] != first[i] {
					t.Errorf("user %s\n%s: %s\n%s: %s", a.users[i], mode, got[i], modes[0], first[i])
				}
			}
		})
	}
}

// normalize turns post ids into scenario indexes, so runs over different
// stores compare.
func normalize(a *applied, ids []string) []int {
	out := make([]int, len(ids))
	for i, id := range ids {
		out[i] = slices.Index(a.posts, id)
	}
	return out
}

func TestHomeCapAndBeyond(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			cfg := feedConfig(mode)
			cfg.HomeCap = 10
			cfg.Backfill = 5
			s, rdb := feedStore(t, cfg)
			w := feedWorker(t, s, rdb)
			ctx := context.Background()
			u := feedUsers(t, s, 4)
			me, a, b, late := u[0], u[1], u[2], u[3]
			var want []string
			for i := 0; i < 8; i++ { // before the follow: 5 are backfilled
				want = append(want, feedPost(t, s, late, social.NewPost{}).ID)
			}
			feedOK(t, s.Follow(ctx, me, a))
			feedOK(t, s.Follow(ctx, me, b))
			for i := 0; i < 30; i++ {
				want = append(want, feedPost(t, s, []string{a, b, me}[i%3], social.NewPost{}).ID)
			}
			drain(t, w)
			if got := home(t, s, me, 4); len(got) != 30 {
				t.Fatalf("before following late: %d posts", len(got))
			}
			feedOK(t, s.Follow(ctx, me, late))
			for i := 0; i < 3; i++ {
				want = append(want, feedPost(t, s, late, social.NewPost{}).ID)
			}
			drain(t, w)
			want = byNewest(want)
			for _, first := range []int{1, 4, 10, 100} {
				if got := home(t, s, me, first); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("first %d:\ngot  %v\nwant %v", first, got, want)
				}
			}
			if n := rdb.LLen(ctx, s.Keys().Home(me)).Val(); n > 10 {
				t.Fatalf("home list holds %d entries, cap 10", n)
			}
		})
	}
}

func TestCelebrityAuthorIsPulled(t *testing.T) {
	cfg := feedConfig(redisstore.Hybrid)
	cfg.CelebrityThreshold = 3
	s, rdb := feedStore(t, cfg)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 7)
	celeb, fans, late := u[0], u[1:6], u[6]
	for _, f := range fans {
		feedOK(t, s.Follow(ctx, f, celeb))
		// Every fan is an active reader.
		_ = home(t, s, f, 5)
	}
	var posts []string
	for i := 0; i < 4; i++ {
		posts = append(posts, feedPost(t, s, celeb, social.NewPost{}).ID)
	}
	drain(t, w)
	for _, f := range fans {
		if n := rdb.LLen(ctx, s.Keys().Home(f)).Val(); n != 0 {
			t.Fatalf("a celebrity's posts were pushed to fan %s (%d entries)", f, n)
		}
		if got := home(t, s, f, 3); fmt.Sprint(got) != fmt.Sprint(byNewest(slices.Clone(posts))) {
			t.Fatalf("fan %s sees %v, want %v", f, got, posts)
		}
	}
	// Fan-out of a celebrity's post writes nothing per follower: the job
	// costs the same with 5 followers as with 10 000.
	cnt := &cmdCounter{watch: map[string]bool{}}
	for _, f := range fans {
		cnt.watch[s.Keys().Home(f)] = true
		cnt.watch[s.Keys().CelebFollowing(f)] = true
	}
	rdb.AddHook(cnt)
	cnt.take()
	posts = append(posts, feedPost(t, s, celeb, social.NewPost{}).ID)
	drain(t, w)
	if n := cnt.take(); n.cmds > 20 || n.touched {
		t.Fatalf("createPost and fan-out of a celebrity's post sent %d commands (touching followers' keys: %v)", n.cmds, n.touched)
	}
	// A new follower gets the posts too, and so does one who unfollows and
	// follows again.
	feedOK(t, s.Follow(ctx, late, celeb))
	feedOK(t, s.Unfollow(ctx, fans[0], celeb))
	if got := home(t, s, fans[0], 3); len(got) != 0 {
		t.Fatalf("after unfollowing: %v", got)
	}
	feedOK(t, s.Follow(ctx, fans[0], celeb))
	want := fmt.Sprint(byNewest(slices.Clone(posts)))
	for _, r := range []string{late, fans[0]} {
		if got := home(t, s, r, 2); fmt.Sprint(got) != want {
			t.Fatalf("%s sees %v, want %s", r, got, want)
		}
	}
}

// An inactive reader's home list and mark expire (hybrid mode): fan-out
// skips them, writing nothing, and their next read rebuilds the list. With
// a real redis-server the TTL runs out for real.
func TestInactiveReaderIsRebuilt(t *testing.T) {
	cfg := feedConfig(redisstore.Hybrid)
	cfg.InactiveAfter = time.Hour
	if redistest.Real() {
		cfg.InactiveAfter = 600 * time.Millisecond
	}
	s, rdb := feedStore(t, cfg)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	reader, active, author := u[0], u[1], u[2]
	for _, r := range []string{reader, active} {
		feedOK(t, s.Follow(ctx, r, author))
		_ = home(t, s, r, 5)
	}
	first := feedPost(t, s, author, social.NewPost{}).ID
	drain(t, w)
	for _, k := range []string{s.Keys().Home(reader), s.Keys().HomeMark(reader)} {
		if ttl := rdb.PTTL(ctx, k).Val(); ttl <= 0 || ttl > cfg.InactiveAfter {
			t.Fatalf("%s has TTL %v, want at most %v", k, ttl, cfg.InactiveAfter)
		}
	}
	// The reader stops reading; the other reader goes on.
	if redistest.Real() {
		redistest.Eventually(t, 5*time.Second, "the inactive reader's list and mark to expire", func() bool {
			_ = home(t, s, active, 5)
			return rdb.Exists(ctx, s.Keys().Home(reader), s.Keys().HomeMark(reader)).Val() == 0
		})
	} else {
		feedOK(t, rdb.Del(ctx, s.Keys().Home(reader), s.Keys().HomeMark(reader)).Err())
	}
	var later []string
	for i := 0; i < 3; i++ {
		later = append(later, feedPost(t, s, author, social.NewPost{}).ID)
	}
	drain(t, w)
	if n := rdb.Exists(ctx, s.Keys().Home(reader), s.Keys().HomeMark(reader)).Val(); n != 0 {
		t.Fatalf("fan-out wrote to the inactive reader: %d keys", n)
	}
	if n := rdb.LLen(ctx, s.Keys().Home(active)).Val(); n != 4 {
		t.Fatalf("fan-out skipped the active reader: %d entries", n)
	}
	want := fmt.Sprint(byNewest(append(later, first)))
	if got := home(t, s, reader, 2); fmt.Sprint(got) != want {
		t.Fatalf("returning reader sees %v, want %s", got, want)
	}
	if n := rdb.LLen(ctx, s.Keys().Home(reader)).Val(); n != 4 {
		t.Fatalf("the list was not rebuilt: %d entries", n)
	}
	// Back to active: the next post is pushed again.
	feedPost(t, s, author, social.NewPost{})
	drain(t, w)
	if n := rdb.LLen(ctx, s.Keys().Home(reader)).Val(); n != 5 {
		t.Fatalf("not pushed after coming back: %d entries", n)
	}
}

// The TTL of a reader's home list and mark through the writes that rewrite
// the list, and across a change of mode: hybrid mode gives both the full
// TTL on reads and merges, a purge (which may be another user's doing)
// keeps the list's, and push mode removes a TTL hybrid mode left.
func TestHomeTTL(t *testing.T) {
	ctx := context.Background()
	cfg := feedConfig(redisstore.Hybrid)
	cfg.InactiveAfter = time.Hour
	s, rdb := feedStore(t, cfg)
	w := feedWorker(t, s, rdb)
	u := feedUsers(t, s, 3)
	reader, a, b := u[0], u[1], u[2]
	list, mark := s.Keys().Home(reader), s.Keys().HomeMark(reader)
	ttls := func(step string, lo, hi time.Duration) {
		t.Helper()
		for _, k := range []string{list, mark} {
			if ttl := rdb.PTTL(ctx, k).Val(); ttl < lo || ttl > hi {
				t.Errorf("%s: %s has TTL %v, want %v to %v", step, k, ttl, lo, hi)
			}
		}
	}
	feedOK(t, s.Follow(ctx, reader, a))
	feedOK(t, s.Follow(ctx, reader, b))
	feedPost(t, s, a, social.NewPost{})
	feedPost(t, s, b, social.NewPost{})
	drain(t, w)
	if got := home(t, s, reader, 5); len(got) != 2 {
		t.Fatalf("home = %v, want two posts", got)
	}
	ttls("after a read", 59*time.Minute, time.Hour)

	feedOK(t, rdb.PExpire(ctx, list, 30*time.Minute).Err())
	feedOK(t, s.Block(ctx, b, reader)) // b's block purges b's post from the reader's list
	if n := rdb.LLen(ctx, list).Val(); n != 1 {
		t.Fatalf("after the block the list holds %d entries, want 1", n)
	}
	if ttl := rdb.PTTL(ctx, list).Val(); ttl <= 29*time.Minute || ttl > 30*time.Minute {
		t.Errorf("a purge changed the list's TTL to %v, want it kept (30m)", ttl)
	}

	feedOK(t, s.Unfollow(ctx, reader, a))
	feedOK(t, s.Follow(ctx, reader, a)) // the backfill merge is the reader's doing
	ttls("after a follow", 59*time.Minute, time.Hour)

	push := cfg
	push.Mode = redisstore.Push
	feedOK(t, s.SetFeed(push))
	feedOK(t, rdb.HSet(ctx, mark, "active", 0).Err()) // due for the activity write
	_ = home(t, s, reader, 5)
	ttls("after a push-mode read", -1, -1)
}

// A read that finds no mark rebuilds the list. When the rebuild fails
// (here its merge script), the next read rebuilds again rather than
// taking the list for complete.
func TestFailedRebuildIsRetried(t *testing.T) {
	for _, mode := range []redisstore.FeedMode{redisstore.Push, redisstore.Hybrid} {
		t.Run(string(mode), func(t *testing.T) {
			ctx := context.Background()
			s, rdb := feedStore(t, feedConfig(mode))
			w := feedWorker(t, s, rdb)
			u := feedUsers(t, s, 2)
			reader, author := u[0], u[1]
			feedOK(t, s.Follow(ctx, reader, author))
			var ids []string
			for range 3 {
				ids = append(ids, feedPost(t, s, author, social.NewPost{}).ID)
			}
			drain(t, w)
			feedOK(t, s.ForgetHome(ctx, reader))
			sum := sha1.Sum([]byte(redisstore.ScriptSources["home_merge.lua"]))
			fail := &failScript{sha: hex.EncodeToString(sum[:])}
			fail.on.Store(true)
			rdb.AddHook(fail)
			if _, err := s.HomePage(ctx, reader, social.PageRequest{First: 5}, readplan.PageWants{}); err == nil {
				t.Fatal("the read whose rebuild failed succeeded")
			}
			fail.on.Store(false)
			if got, want := fmt.Sprint(home(t, s, reader, 5)), fmt.Sprint(byNewest(ids)); got != want {
				t.Fatalf("after a failed rebuild the reader sees %s, want %s", got, want)
			}
		})
	}
}

// failScript fails the calls of one script while on.
type failScript struct {
	sha string
	on  atomic.Bool
}

func (f *failScript) hit(cmd redis.Cmder) bool {
	a := cmd.Args()
	return f.on.Load() && len(a) > 1 && strings.EqualFold(fmt.Sprint(a[0]), "evalsha") && a[1] == f.sha
}

func (f *failScript) DialHook(next redis.DialHook) redis.DialHook { return next }
func (f *failScript) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if f.hit(cmd) {
			err := errors.New("injected failure")
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}
func (f *failScript) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func TestCursorStableUnderConcurrentPosting(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			cfg := feedConfig(mode)
			cfg.HomeCap = 25
			s, rdb := feedStore(t, cfg)
			w := feedWorker(t, s, rdb)
			ctx := context.Background()
			u := feedUsers(t, s, 3)
			reader, a, b := u[0], u[1], u[2]
			feedOK(t, s.Follow(ctx, reader, a))
			feedOK(t, s.Follow(ctx, reader, b))
			var before []string
			for i := 0; i < 40; i++ {
				before = append(before, feedPost(t, s, []string{a, b}[i%2], social.NewPost{}).ID)
			}
			drain(t, w)
			// Page through while both authors keep posting and a worker
			// delivers concurrently.
			stop := make(chan struct{})
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if _, err := s.CreatePost(ctx, []string{a, b}[i%2], social.NewPost{Content: "new"}); err != nil {
						t.Error(err)
						return
					}
					if _, err := w.Drain(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}()
			got := home(t, s, reader, 3)
			close(stop)
			wg.Wait()
			// Everything from before the first page, in order, and only
			// newer posts ahead of it.
			var old []string
			for _, id := range got {
				if slices.Contains(before, id) {
					old = append(old, id)
				}
			}
			if fmt.Sprint(old) != fmt.Sprint(byNewest(before)) {
				t.Fatalf("older posts seen while paging:\n%v\nwant\n%v", old, before)
			}
		})
	}
}

func TestHomeRejectsAnonymousAndBadCursor(t *testing.T) {
	s, _ := feedStore(t)
	u := feedUsers(t, s, 1)
	ctx := context.Background()
	if _, err := homeIDs(ctx, s, "", social.PageRequest{First: 5}); !social.IsCode(err, social.Unauthenticated) {
		t.Fatalf("anonymous: %v", err)
	}
	for _, p := range []social.PageRequest{{First: 0}, {First: 101}, {First: 5, After: "zz"}} {
		if _, err := homeIDs(ctx, s, u[0], p); !social.IsCode(err, social.BadUserInput) {
			t.Fatalf("%+v: %v", p, err)
		}
	}
}

// TestHomeListMemory measures what a home list at the cap costs in Redis
// (docs/fanout.md): at most 20 bytes an entry, with realistic ids (7-digit
// posts, 6-digit authors), filled the way fan-out fills it.
func TestHomeListMemory(t *testing.T) {
	s, rdb := feedStore(t)
	if !redistest.Real() {
		t.Skip("MEMORY USAGE needs a real redis-server")
	}
	ctx := context.Background()
	const entries = redisstore.DefaultHomeCap
	key := s.Keys().Home("42")
	rng := rand.New(rand.NewPCG(1, 2))
	post := 9_000_000
	for i := 0; i < entries; i++ {
		post -= 1 + rng.IntN(50)
		feedOK(t, rdb.RPush(ctx, key, fmt.Sprintf("%d:%d", post, 100000+rng.IntN(900000))).Err())
	}
	list := rdb.MemoryUsage(ctx, key, 0).Val()
	zkey := key + ":zset-for-comparison"
	for i := 0; i < entries; i++ {
		feedOK(t, rdb.ZAdd(ctx, zkey, redis.Z{Score: float64(9_000_000 - i), Member: 9_000_000 - i}).Err())
	}
	zset := rdb.MemoryUsage(ctx, zkey, 0).Val()
	t.Logf("home list of %d entries: %d bytes (%.1f per entry); a zset of the ids alone: %d bytes (%.1f per entry)",
		entries, list, float64(list)/entries, zset, float64(zset)/entries)
	if float64(list)/entries > 20 {
		t.Fatalf("%.1f bytes per entry, target 20", float64(list)/entries)
	}
}
