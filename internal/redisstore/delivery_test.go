package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// The batch delivery path (deliver_batch.lua through HandleFanoutJob),
// case by case. Users are numbered: 0 the author, 1..followers its
// followers, followers+1 a user who does not follow. The posts' jobs run
// in the order given, straight through HandleFanoutJob, so a case can
// redeliver a job or run jobs out of order.
func TestDeliverBatch(t *testing.T) {
	const followers = 12
	outsider := followers + 1
	tests := []struct {
		name      string
		mode      redisstore.FeedMode
		cap       int
		batch     int           // FanoutBatch (default 1 000)
		muted     []int         // followers who muted the author
		halfMuted []int         // followers whose Mutes holds the author but not the author's MutedBy (a mute stopped halfway)
		unmuted   []int         // followers who muted the author, then unmuted
		inactive  []int         // followers whose home list and mark expired (hybrid skips them)
		unread    []int         // followers who never read their home (their mark is the registration's)
		posts     []audience    // by the author
		order     []int         // the jobs run, by post index
		want      map[int][]int // a user's home list, as post indexes newest first (followers not named: the newest posts of their audience, unless muted or inactive)
		listen    int           // a user whose live channel is listened to (0: none)
		heard     []int         // what it hears, by post index, in order
	}{
		{name: "newest first", posts: make([]audience, 3), order: []int{0, 1, 2}, listen: 1, heard: []int{0, 1, 2}},
		{name: "out of order", posts: make([]audience, 3), order: []int{2, 0, 1}, listen: 2, heard: []int{2, 0, 1}},
		{name: "redelivered jobs add and announce nothing", posts: make([]audience, 2), order: []int{0, 1, 0, 1, 1, 0},
			listen: 3, heard: []int{0, 1}},
		{name: "small batches", batch: 5, posts: make([]audience, 2), order: []int{1, 0, 1}},
		// A call's live channels are listed when the server has fewer live
		// channels than the call has recipients, counted one by one when
		// it has as many (one recipient a call).
		{name: "one recipient a call", batch: 1, posts: make([]audience, 2), order: []int{0, 1}, listen: 3, heard: []int{0, 1}},
		{name: "capped", cap: 2, posts: make([]audience, 4), order: []int{0, 1, 2, 3}},
		{name: "capped, an old post below the floor", cap: 2, posts: make([]audience, 4), order: []int{1, 2, 3, 0}},
		{name: "muted", muted: []int{1, 4}, posts: make([]audience, 2), order: []int{0, 1},
			want: map[int][]int{1: nil, 4: nil}, listen: 1},
		{name: "muted halfway: delivered, hidden by the page", halfMuted: []int{2}, posts: make([]audience, 2), order: []int{0, 1},
			want: map[int][]int{2: {1, 0}}},
		{name: "muted, in small batches", batch: 3, muted: []int{1, 3, 4, 12}, posts: make([]audience, 1), order: []int{0},
			want: map[int][]int{1: nil, 3: nil, 4: nil, 12: nil}},
		{name: "unmuted, muting someone else", unmuted: []int{3}, posts: make([]audience, 2), order: []int{0, 1}},
		{name: "only to", posts: []audience{{only: []int{2, 5, outsider}}, {}}, order: []int{0, 1},
			want: map[int][]int{outsider: nil}, listen: 2, heard: []int{0, 1}},
		{name: "only to a follower who muted", muted: []int{2}, posts: []audience{{only: []int{2, 3}}}, order: []int{0},
			want: map[int][]int{2: nil}},
		{name: "not to every follower of a batch", batch: 3, posts: []audience{{not: []int{4, 5, 6}}, {}}, order: []int{0, 1}},
		{name: "not to", posts: []audience{{not: []int{3, 7}}, {}}, order: []int{0, 1},
			listen: 3, heard: []int{1}},
		{name: "hybrid skips inactive readers", mode: redisstore.Hybrid, inactive: []int{2, 9}, posts: make([]audience, 2),
			order: []int{0, 1}, want: map[int][]int{2: nil, 9: nil}, listen: 9},
		{name: "hybrid, out of order and redelivered", mode: redisstore.Hybrid, inactive: []int{5}, posts: make([]audience, 3),
			order: []int{1, 0, 2, 1}, want: map[int][]int{5: nil}, listen: 4, heard: []int{1, 0, 2}},
		{name: "hybrid, only to an inactive follower", mode: redisstore.Hybrid, inactive: []int{3}, posts: []audience{{only: []int{2, 3}}},
			order: []int{0}, want: map[int][]int{3: nil}},
		{name: "push delivers to readers who never read", mode: redisstore.Push, unread: []int{2},
			posts: make([]audience, 1), order: []int{0}, listen: 2, heard: []int{0}},
		{name: "hybrid delivers to new readers who never read", mode: redisstore.Hybrid, unread: []int{2, 3},
			posts: make([]audience, 1), order: []int{0}, listen: 2, heard: []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			cfg := feedConfig(cmpOr(tt.mode, redisstore.Push))
			cfg.HomeCap = cmpOr(tt.cap, cfg.HomeCap)
			cfg.FanoutBatch = cmpOr(tt.batch, cfg.FanoutBatch)
			s, rdb := feedStore(t, cfg)
			u := feedUsers(t, s, followers+2)
			author := u[0]
			for i := 1; i <= followers; i++ {
				feedOK(t, s.Follow(ctx, u[i], author))
				if !slices.Contains(tt.unread, i) {
					_ = home(t, s, u[i], 5) // marks the reader active
				}
			}
			for _, i := range tt.inactive {
				feedOK(t, s.ForgetHome(ctx, u[i])) // as if their TTL ran out
			}
			for _, i := range tt.muted {
				feedOK(t, s.Mute(ctx, u[i], author))
			}
			for _, i := range tt.halfMuted {
				feedOK(t, rdb.SAdd(ctx, s.Keys().Mutes(u[i]), author).Err())
			}
			for _, i := range tt.unmuted {
				feedOK(t, s.Mute(ctx, u[i], u[outsider]))
				feedOK(t, s.Mute(ctx, u[i], author))
				feedOK(t, s.Unmute(ctx, u[i], author))
			}
			var live *redis.PubSub
			if tt.listen > 0 {
				live = listenLive(t, s, rdb, u[tt.listen])
			}
			ids := make([]string, len(tt.posts))
			for i, a := range tt.posts {
				ids[i] = feedPost(t, s, author, social.NewPost{OnlyTo: pick(u, a.only), NotTo: pick(u, a.not)}).ID
			}
			for _, i := range tt.order {
				feedOK(t, s.HandleFanoutJob(ctx, map[string]string{"op": "post", "post": ids[i], "author": author}))
			}

			for r := 1; r <= outsider; r++ {
				want, named := tt.want[r]
				if !named && r <= followers && !slices.Contains(tt.muted, r) &&
					!(cfg.Mode == redisstore.Hybrid && slices.Contains(tt.inactive, r)) {
					want = lastPosts(tt.posts, r, cfg.HomeCap)
				}
				wantEntries := make([]string, len(want))
				for j, p := range want {
					wantEntries[j] = ids[p] + ":" + author
				}
				got := rdb.LRange(ctx, s.Keys().Home(u[r]), 0, -1).Val()
				if !slices.Equal(got, wantEntries) {
					t.Errorf("user %d's home list = %v, want %v", r, got, wantEntries)
				}
				// Hybrid lists expire with their mark; push lists never do.
				ttl := rdb.PTTL(ctx, s.Keys().Home(u[r])).Val()
				switch {
				case len(got) == 0:
				case cfg.Mode == redisstore.Hybrid && r <= followers && (ttl <= 0 || ttl > cfg.InactiveAfter):
					t.Errorf("user %d's home list has TTL %v, want at most %v", r, ttl, cfg.InactiveAfter)
				case cfg.Mode == redisstore.Push && ttl != -1:
					t.Errorf("user %d's home list has TTL %v, want none", r, ttl)
				}
				if cfg.Mode == redisstore.Hybrid && slices.Contains(tt.inactive, r) && rdb.Exists(ctx, s.Keys().HomeMark(u[r])).Val() != 0 {
					t.Errorf("fan-out wrote the mark of inactive user %d", r)
				}
			}
			for _, i := range tt.halfMuted {
				if got := home(t, s, u[i], 5); len(got) != 0 {
					t.Errorf("user %d, who muted the author, sees %v", i, got)
				}
			}
			if live != nil {
				var want []string
				for _, p := range tt.heard {
					want = append(want, ids[p]+":"+author)
				}
				if got := heard(t, live); !slices.Equal(got, want) {
					t.Errorf("user %d heard %v, want %v", tt.listen, got, want)
				}
			}
		})
	}
}

// audience is a post's audience, by user index.
type audience struct{ only, not []int }

func pick(u []string, idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, u[i])
	}
	return out
}

// lastPosts is the indexes of the newest posts whose audience takes
// follower r, newest first, at most limit of them.
func lastPosts(posts []audience, r, limit int) []int {
	var out []int
	for i := len(posts) - 1; i >= 0 && len(out) < limit; i-- {
		a := posts[i]
		if (len(a.only) == 0 || slices.Contains(a.only, r)) && !slices.Contains(a.not, r) {
			out = append(out, i)
		}
	}
	return out
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// listenLive subscribes to u's live channel as a live gateway does (classic
// pub/sub on the embedded server) and waits for the confirmation.
func listenLive(tb testing.TB, s *redisstore.Store, rdb redis.UniversalClient, u string) *redis.PubSub {
	tb.Helper()
	ctx := context.Background()
	var ps *redis.PubSub
	if redistest.Real() {
		ps = rdb.SSubscribe(ctx, s.Keys().LiveUser(u))
	} else {
		s.UseClassicPubSub()
		ps = rdb.Subscribe(ctx, s.Keys().LiveUser(u))
	}
	tb.Cleanup(func() { ps.Close() })
	if _, err := ps.Receive(ctx); err != nil {
		tb.Fatalf("subscribe: %v", err)
	}
	return ps
}

// heard returns the messages a subscription got, waiting a little for
// late ones.
func heard(tb testing.TB, ps *redis.PubSub) []string {
	tb.Helper()
	var out []string
	for {
		m, err := ps.ReceiveTimeout(context.Background(), 300*time.Millisecond)
		if err != nil {
			return out
		}
		if msg, ok := m.(*redis.Message); ok {
			out = append(out, msg.Payload)
		}
	}
}

// A batch that straddles servers, as a stale slot map sends it on Redis
// Cluster: the call fails where it meets a key of another master, and the
// batch goes again a recipient at a time; what the first call delivered
// is not delivered twice. On one Redis it is an ordinary batch.
func TestDeliverBatchAcrossServers(t *testing.T) {
	ctx := context.Background()
	s, rdb := feedStore(t, feedConfig(redisstore.Push))
	u := feedUsers(t, s, 41)
	author, recipients := u[0], u[1:]
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		masters := map[string]bool{}
		for _, r := range recipients {
			m, err := cc.MasterForKey(ctx, s.Keys().Home(r))
			feedOK(t, err)
			masters[m.Options().Addr] = true
		}
		if len(masters) < 2 {
			t.Fatalf("the recipients are on %d master(s): the batch straddles nothing", len(masters))
		}
		t.Logf("recipients on %d masters", len(masters))
	}
	live := listenLive(t, s, rdb, recipients[len(recipients)-1])
	post := feedPost(t, s, author, social.NewPost{}).ID
	entry := post + ":" + author
	for run := 0; run < 2; run++ {
		feedOK(t, s.DeliverAsOneBatch(ctx, post, author, recipients))
		for _, r := range recipients {
			if got := rdb.LRange(ctx, s.Keys().Home(r), 0, -1).Val(); !slices.Equal(got, []string{entry}) {
				t.Fatalf("run %d: %s's home list = %v, want [%s]", run, r, got, entry)
			}
		}
	}
	if got := heard(t, live); !slices.Equal(got, []string{entry}) {
		t.Errorf("the last recipient heard %v, want [%s]", got, entry)
	}
}

// The walk of a user's followers returns every follower present for the
// whole walk at least once, whatever happens to the set between pages.
func TestEachFollowers(t *testing.T) {
	const batch = 3
	tests := []struct {
		name   string
		scores []int // follower i+1 follows at scores[i] (ties allowed)
		// between runs after the page numbered by its key: ZREM of members
		// (by number), ZADD of members at a new score.
		remove map[int][]int
		add    map[int]map[int]int
		want   []int // followers that must be passed (besides, any may be)
	}{
		{name: "plain", scores: []int{1, 2, 3, 4, 5, 6, 7, 8}, want: []int{1, 2, 3, 4, 5, 6, 7, 8}},
		{name: "exact pages", scores: []int{1, 2, 3, 4, 5, 6}, want: []int{1, 2, 3, 4, 5, 6}},
		{name: "ties", scores: []int{1, 1, 1, 1, 1, 2, 2, 2, 2}, want: []int{1, 2, 3, 4, 5, 6, 7, 8, 9}},
		{name: "unfollows before the cursor", scores: []int{1, 2, 3, 4, 5, 6, 7, 8},
			remove: map[int][]int{0: {1, 2}}, want: []int{4, 5, 6, 7, 8}},
		{name: "the cursor unfollows", scores: []int{1, 2, 3, 4, 5, 6, 7, 8},
			remove: map[int][]int{0: {3}}, want: []int{4, 5, 6, 7, 8}},
		{name: "the cursor unfollows among ties", scores: []int{1, 1, 1, 1, 1, 1, 1},
			remove: map[int][]int{0: {3, 1}}, want: []int{4, 5, 6, 7}},
		{name: "the cursor follows again", scores: []int{1, 2, 3, 4, 5, 6, 7, 8},
			add: map[int]map[int]int{0: {3: 100}}, want: []int{4, 5, 6, 7, 8}},
		{name: "new followers at the end", scores: []int{1, 2, 3, 4},
			add: map[int]map[int]int{0: {9: 50, 10: 60}}, want: []int{1, 2, 3, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			cfg := feedConfig(redisstore.Push)
			cfg.FanoutBatch = batch
			s, rdb := feedStore(t, cfg)
			key := s.Keys().Followers("1")
			for i, sc := range tt.scores {
				feedOK(t, rdb.ZAdd(ctx, key, redis.Z{Score: float64(sc), Member: fmt.Sprint(i + 1)}).Err())
			}
			seen := map[string]int{}
			page := 0
			err := s.EachFollowers(ctx, "1", func(b []string) error {
				if len(b) > batch {
					t.Fatalf("page of %d", len(b))
				}
				for _, m := range b {
					seen[m]++
				}
				for _, m := range tt.remove[page] {
					rdb.ZRem(ctx, key, fmt.Sprint(m))
				}
				for m, sc := range tt.add[page] {
					rdb.ZAdd(ctx, key, redis.Z{Score: float64(sc), Member: fmt.Sprint(m)})
				}
				page++
				return nil
			})
			feedOK(t, err)
			var missing []string
			for _, m := range tt.want {
				if seen[fmt.Sprint(m)] == 0 {
					missing = append(missing, fmt.Sprint(m))
				}
			}
			if len(missing) > 0 {
				t.Errorf("followers %s never passed (passed: %v)", strings.Join(missing, ", "), seen)
			}
		})
	}
}
