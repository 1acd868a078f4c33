package redisstore_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// foldNet is a small network whose reader follows every author, with the
// model of its posts: each post's story (its original for a plain repost,
// itself otherwise).
type foldNet struct {
	mode    redisstore.FeedMode
	s       *redisstore.Store
	drain   func()
	rng     *rand.Rand
	reader  string
	authors []string // the reader is one of them
	ids     []string // every post, oldest first
	story   map[string]string
	plain   map[string]bool
	gone    map[string]bool // deleted
	author  map[string]string
}

func newFoldNet(t *testing.T, mode redisstore.FeedMode, seed uint64) *foldNet {
	t.Helper()
	cfg := feedConfig(mode)
	// Hybrid: authors with two followers or more are pulled, so reposts
	// and originals also come from own timelines read at read time.
	cfg.CelebrityThreshold = 1
	s, rdb := feedStore(t, cfg)
	if seed != 2 {
		// With the post cache, the entries above a page are mostly known
		// by their cached fields; without it, they are read.
		s.CachePosts(1000)
	}
	w := feedWorker(t, s, rdb)
	u := feedUsers(t, s, 6)
	n := &foldNet{mode: mode, s: s, drain: func() { drain(t, w) }, rng: rand.New(rand.NewPCG(seed, 7)),
		reader: u[0], authors: u[:5], story: map[string]string{}, plain: map[string]bool{}, gone: map[string]bool{}, author: map[string]string{}}
	ctx := context.Background()
	for _, a := range u[1:5] {
		feedOK(t, s.Follow(ctx, n.reader, a))
	}
	for _, a := range u[1:3] { // u[5] makes u[1] and u[2] pulled in hybrid mode
		feedOK(t, s.Follow(ctx, u[5], a))
	}
	return n
}

// add writes a post: an original, a plain repost or a quote of post of
// (an original or a quote), and returns its id ("" when the author had
// reposted it already).
func (n *foldNet) add(t *testing.T, author, kind, of string) string {
	t.Helper()
	in := social.NewPost{Content: fmt.Sprint("post ", len(n.ids))}
	switch kind {
	case "plain":
		in = social.NewPost{RepostOf: of}
	case "quote":
		in.RepostOf = of
	}
	p, err := n.s.CreatePost(context.Background(), author, in)
	feedOK(t, err)
	if _, dup := n.story[p.ID]; dup {
		return ""
	}
	n.ids = append(n.ids, p.ID)
	n.author[p.ID] = author
	n.story[p.ID] = p.ID
	if kind == "plain" {
		n.story[p.ID], n.plain[p.ID] = of, true
	}
	return p.ID
}

// originals are the posts a repost may name: originals and quotes.
func (n *foldNet) originals(keep func(string) bool) []string {
	var out []string
	for _, id := range n.ids {
		if !n.plain[id] && !n.gone[id] && keep(id) {
			out = append(out, id)
		}
	}
	return out
}

// arrive writes one or two posts between pages: mostly plain reposts of
// posts the walk has shown, or has not, and some quotes and originals.
func (n *foldNet) arrive(t *testing.T, shown map[string]bool) {
	t.Helper()
	for range 1 + n.rng.IntN(2) {
		author := n.authors[n.rng.IntN(len(n.authors))]
		seen := n.originals(func(id string) bool { return shown[n.story[id]] })
		unseen := n.originals(func(id string) bool { return !shown[n.story[id]] })
		switch r := n.rng.IntN(10); {
		case r < 4 && len(seen) > 0:
			n.add(t, author, "plain", seen[n.rng.IntN(len(seen))])
		case r < 8 && len(unseen) > 0:
			n.add(t, author, "plain", unseen[n.rng.IntN(len(unseen))])
		case r < 9:
			all := n.originals(func(string) bool { return true })
			n.add(t, author, "quote", all[n.rng.IntN(len(all))])
		default:
			n.add(t, author, "original", "")
		}
	}
	n.drain()
	if n.rng.IntN(4) == 0 {
		// A plain repost deleted: gone from every page at once, while
		// its entries stay in the lists until its job runs (the next
		// drain); the post it folded comes back.
		var plain []string
		for _, id := range n.ids {
			if n.plain[id] && !n.gone[id] {
				plain = append(plain, id)
			}
		}
		if len(plain) > 0 {
			id := plain[n.rng.IntN(len(plain))]
			feedOK(t, n.s.DeletePost(context.Background(), n.author[id], id))
			n.gone[id] = true
		}
	}
}

// newest is the newest post of each story among the first k posts.
func (n *foldNet) newest(k int) map[string]string {
	out := map[string]string{}
	for _, id := range n.ids[:k] {
		if !n.gone[id] {
			out[n.story[id]] = id // ids ascend
		}
	}
	return out
}

// want is the folded timeline: the newest post of each story, newest
// first.
func (n *foldNet) want() []string {
	var out []string
	for _, id := range n.newest(len(n.ids)) {
		out = append(out, id)
	}
	return byNewest(out)
}

// TestHomeFoldWhileScrolling walks a whole home timeline in small pages,
// downwards (after) and upwards (before), while plain reposts of posts
// the walk has shown and of posts it has not yet reached arrive between
// pages, in every mode. Every post shown is the newest post of its story
// when its page is read; a downward walk shows a story at most once, and
// an upward one shows it again only for a repost newer than its first
// showing (the story moved up past the reader). A quote is a post of its
// own. Read again at rest, the timeline is each story's newest post.
func TestHomeFoldWhileScrolling(t *testing.T) {
	for _, mode := range modes {
		for first := 1; first <= 3; first++ {
			for _, dir := range []string{"after", "before"} {
				t.Run(fmt.Sprint(mode, "/first", first, "/", dir), func(t *testing.T) {
					n := newFoldNet(t, mode, uint64(first))
					start := n.add(t, n.reader, "original", "")
					for i := range 14 {
						author := n.authors[1+i%4]
						if i > 3 && i%3 == 0 {
							all := n.originals(func(id string) bool { return id != start })
							n.add(t, author, "plain", all[n.rng.IntN(len(all))])
						} else {
							n.add(t, author, "original", "")
						}
					}
					n.drain()
					if dir == "after" {
						walkDown(t, n, first)
					} else {
						walkUp(t, n, first, start)
					}
					if got, want := home(t, n.s, n.reader, first), n.want(); !slices.Equal(got, want) {
						t.Errorf("at rest: home = %v, want %v", got, want)
					}
				})
			}
		}
	}
}

// checkNewest fails for a post on a page that is not its story's newest
// among the first k posts.
func checkNewest(t *testing.T, n *foldNet, page, k int, items []string) {
	t.Helper()
	newest := n.newest(k)
	for _, id := range items {
		if top := newest[n.story[id]]; top != id {
			t.Errorf("page %d shows %s, whose story %s has a newer post, %s", page, id, n.story[id], top)
		}
	}
}

// arrivals is how many pages of a walk are followed by new posts: an
// upward walk reads the new posts too, and must end.
const arrivals = 12

func walkDown(t *testing.T, n *foldNet, first int) {
	t.Helper()
	shown := map[string]bool{} // stories
	after := ""
	pulled := len(n.ids) // pull mode: the posts the first page pulled
	for page := 0; ; page++ {
		if page > 200 {
			t.Fatal("too many pages")
		}
		c, err := homeIDs(context.Background(), n.s, n.reader, social.PageRequest{First: first, After: after})
		feedOK(t, err)
		k := len(n.ids)
		if n.mode == redisstore.Pull {
			// A page with a cursor reads the list as the first page
			// pulled it: a repost written since is not in it yet.
			k = pulled
		}
		checkNewest(t, n, page, k, c.Items)
		for _, id := range c.Items {
			if shown[n.story[id]] {
				t.Errorf("page %d shows %s, of story %s shown on an earlier page", page, id, n.story[id])
			}
			shown[n.story[id]] = true
		}
		if !c.HasNext {
			return
		}
		after = c.EndCursor()
		if page < arrivals {
			n.arrive(t, shown)
		}
	}
}

func walkUp(t *testing.T, n *foldNet, first int, start string) {
	t.Helper()
	shownAt := map[string]int{} // story -> the number of posts when it was shown
	before := social.EncodeCursor(start)
	for page := 0; ; page++ {
		if page > 200 {
			t.Fatal("too many pages")
		}
		c, err := homeIDs(context.Background(), n.s, n.reader, social.PageRequest{First: first, Before: before})
		feedOK(t, err)
		checkNewest(t, n, page, len(n.ids), c.Items)
		for _, id := range c.Items {
			story := n.story[id]
			if at, ok := shownAt[story]; ok && slices.Index(n.ids, id) < at {
				t.Errorf("page %d shows %s, of story %s shown on an earlier page, and older than that page", page, id, story)
			}
			shownAt[story] = len(n.ids)
		}
		if !c.HasPrevious {
			return
		}
		before = c.StartCursor()
		if page < arrivals {
			seen := map[string]bool{}
			for story := range shownAt {
				seen[story] = true
			}
			n.arrive(t, seen)
		}
	}
}

// A plain repost deleted after its page was read folds nothing: the
// post it folded is shown at its place further down, while the repost's
// entries still wait in the lists for its delete job; with or without
// the post cache (which knows the repost for a plain one from the page
// before).
func TestHomeFoldDeletedRepost(t *testing.T) {
	for _, mode := range modes {
		for _, cached := range []bool{false, true} {
			t.Run(fmt.Sprint(mode, "/cached=", cached), func(t *testing.T) {
				s, rdb := feedStore(t, feedConfig(mode))
				if cached {
					s.CachePosts(100)
				}
				w := feedWorker(t, s, rdb)
				ctx := context.Background()
				u := feedUsers(t, s, 3)
				reader, a, b := u[0], u[1], u[2]
				feedOK(t, s.Follow(ctx, reader, a))
				feedOK(t, s.Follow(ctx, reader, b))
				x := feedPost(t, s, b, social.NewPost{Content: "x"})
				var later []string
				for range 3 {
					later = append(later, feedPost(t, s, b, social.NewPost{}).ID)
				}
				r, err := s.CreatePost(ctx, a, social.NewPost{RepostOf: x.ID})
				feedOK(t, err)
				drain(t, w)

				p1, err := homeIDs(ctx, s, reader, social.PageRequest{First: 2})
				feedOK(t, err)
				if want := []string{r.ID, later[2]}; !slices.Equal(p1.Items, want) {
					t.Fatalf("page 1 = %v, want %v", p1.Items, want)
				}
				feedOK(t, s.DeletePost(ctx, a, r.ID))
				var got []string
				for after := p1.EndCursor(); after != ""; {
					c, err := homeIDs(ctx, s, reader, social.PageRequest{First: 2, After: after})
					feedOK(t, err)
					got, after = append(got, c.Items...), ""
					if c.HasNext {
						after = c.EndCursor()
					}
				}
				if want := []string{later[1], later[0], x.ID}; !slices.Equal(got, want) {
					t.Errorf("pages after the repost's deletion = %v, want %v", got, want)
				}
			})
		}
	}
}

// A page whose fold window above holds plain reposts costs the round
// trips of any page (docs/fanout.md's table): the entries above come
// with the list's reply, the pulled authors' with their first read, and
// the reads that tell their stories ride on the visibility check.
func TestHomeFoldRoundTrips(t *testing.T) {
	tests := []struct {
		name        string
		mode        redisstore.FeedMode
		pulled      bool
		down, newer int64
	}{
		{"push", redisstore.Push, false, 2, 3},
		{"pull", redisstore.Pull, false, 2, 6}, // a newer page pulls first
		{"hybrid", redisstore.Hybrid, false, 2, 3},
		{"hybrid following pulled authors", redisstore.Hybrid, true, 3, 3},
	}
	for _, tt := range tests {
		for _, cached := range []bool{false, true} {
			t.Run(fmt.Sprint(tt.name, "/cached=", cached), func(t *testing.T) {
				cfg := feedConfig(tt.mode)
				cfg.CelebrityThreshold = 1
				rdb := redistest.Client(t)
				cnt := &tripCounter{}
				rdb.AddHook(cnt)
				perNode := &tripCounter{} // on Redis Cluster, as TestRoundTrips
				if cc, ok := rdb.(*redis.ClusterClient); ok {
					cc.OnNewNode(func(c *redis.Client) { c.AddHook(perNode) })
				}
				s := redisstore.New(rdb, redistest.Prefix(t))
				feedOK(t, s.SetFeed(cfg))
				if cached {
					s.CachePosts(1000)
				}
				w := feedWorker(t, s, rdb)
				ctx := context.Background()
				u := feedUsers(t, s, 4)
				reader, a, b, fan := u[0], u[1], u[2], u[3]
				feedOK(t, s.Follow(ctx, reader, a))
				feedOK(t, s.Follow(ctx, reader, b))
				if tt.pulled {
					feedOK(t, s.Follow(ctx, fan, a))
					feedOK(t, s.Follow(ctx, fan, b))
				}
				feedOK(t, s.LoadScripts(ctx))
				var originals []string
				for i := range 12 {
					originals = append(originals, feedPost(t, s, b, social.NewPost{Content: fmt.Sprint(i)}).ID)
				}
				for _, o := range originals[:6] {
					_, err := s.CreatePost(ctx, a, social.NewPost{RepostOf: o})
					feedOK(t, err)
				}
				drain(t, w)
				p1, err := homeIDs(ctx, s, reader, social.PageRequest{First: 5})
				feedOK(t, err)
				p2 := social.PageRequest{First: 5, After: p1.EndCursor()}
				nodes := perNode.n.Load()
				if n := cnt.trips(t, func() error { _, err := homeIDs(ctx, s, reader, p2); return err }); n != tt.down {
					t.Errorf("second page, below 5 reposts: %d round trips, want %d", n, tt.down)
				}
				checkNodeTrips(t, "second page", tt.down, perNode.n.Load()-nodes)
				up := social.PageRequest{First: 3, Before: social.EncodeCursor(originals[6])}
				nodes = perNode.n.Load()
				if n := cnt.trips(t, func() error { _, err := homeIDs(ctx, s, reader, up); return err }); n != tt.newer {
					t.Errorf("newer page, below 6 reposts: %d round trips, want %d", n, tt.newer)
				}
				checkNodeTrips(t, "newer page", tt.newer, perNode.n.Load()-nodes)
			})
		}
	}
}
