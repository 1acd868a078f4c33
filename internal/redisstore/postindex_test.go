package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// outsiderNet is an author whose posts are hidden posts (none when hidden
// is 0) around five others: three public, one ONLY_TO the reader, one
// NOT_TO the outsider. The hidden ones are ONLY_TO someone else, or, with
// notToOutsider, NOT_TO the outsider (hidden from the outsider alone).
type outsiderNet struct {
	s                               *redisstore.Store
	counter                         *cmdCounter
	rdb                             redis.UniversalClient
	author, reader, outsider, else_ string
	public, toReader, notOutsider   []string
}

func newOutsiderNet(t *testing.T, hidden int, notToOutsider bool, mode redisstore.FeedMode) *outsiderNet {
	t.Helper()
	rdb := redistest.Client(t)
	n := &outsiderNet{rdb: rdb, counter: &cmdCounter{}}
	n.s = redisstore.New(rdb, redistest.Prefix(t))
	feedOK(t, n.s.SetFeed(feedConfig(mode)))
	ctx := context.Background()
	u := feedUsers(t, n.s, 4)
	n.author, n.reader, n.outsider, n.else_ = u[0], u[1], u[2], u[3]
	feedOK(t, n.s.Follow(ctx, n.reader, n.author))
	feedOK(t, n.s.Follow(ctx, n.outsider, n.author))
	// The visible ones at these places among the hidden ones, in order.
	visible := []struct {
		at int
		in social.NewPost
	}{
		{hidden / 50, social.NewPost{Content: "public 1"}},
		{hidden / 4, social.NewPost{Content: "to the reader", OnlyTo: []string{n.reader}}},
		{hidden / 2, social.NewPost{Content: "public 2"}},
		{hidden * 3 / 4, social.NewPost{Content: "not to the outsider", NotTo: []string{n.outsider}}},
		{hidden * 49 / 50, social.NewPost{Content: "public 3"}},
	}
	for i := 0; i <= hidden; i++ {
		for len(visible) > 0 && visible[0].at == i {
			in := visible[0].in
			visible = visible[1:]
			p, err := n.s.CreatePost(ctx, n.author, in)
			feedOK(t, err)
			switch {
			case in.OnlyTo != nil:
				n.toReader = append(n.toReader, p.ID)
			case in.NotTo != nil:
				n.notOutsider = append(n.notOutsider, p.ID)
			default:
				n.public = append(n.public, p.ID)
			}
		}
		if i < hidden {
			in := social.NewPost{Content: fmt.Sprint("hidden ", i), OnlyTo: []string{n.else_}}
			if notToOutsider {
				in = social.NewPost{Content: fmt.Sprint("hidden ", i), NotTo: []string{n.outsider}}
			}
			_, err := n.s.CreatePost(ctx, n.author, in)
			feedOK(t, err)
		}
	}
	rdb.AddHook(n.counter)
	return n
}

// walk pages the author's timeline (or viewer's home) two posts a page
// and returns the pages and each page's commands and post-hash reads.
func (n *outsiderNet) walk(t *testing.T, viewer string, home bool) (pages []social.Connection[string], cmds, hashes []int) {
	t.Helper()
	ctx := context.Background()
	req := social.PageRequest{First: 2}
	for len(pages) < 20 {
		n.counter.take()
		var pg *readplan.Page
		var err error
		if home {
			pg, err = n.s.HomePage(ctx, viewer, req, readplan.PageWants{})
		} else {
			pg, err = n.s.UserPage(ctx, viewer, n.author, req, readplan.PageWants{})
		}
		feedOK(t, err)
		c := n.counter.take()
		pages, cmds, hashes = append(pages, social.PostIDs(pg.Posts)), append(cmds, c.cmds), append(hashes, c.hashes)
		if !pg.Posts.HasNext {
			return pages, cmds, hashes
		}
		req.After = pg.Posts.EndCursor()
	}
	t.Fatal("too many pages")
	return nil, nil, nil
}

// cpuPerPage is the Redis CPU time (µs, INFO cpu) a page of viewer's
// walk costs, over 50 walks: a figure to report, not a bound to test.
func (n *outsiderNet) cpuPerPage(t *testing.T, viewer string, home bool) float64 {
	t.Helper()
	before, pages := redisCPU(t, n.rdb), 0
	for range 50 {
		p, _, _ := n.walk(t, viewer, home)
		pages += len(p)
	}
	return (redisCPU(t, n.rdb) - before) * 1e6 / float64(pages)
}

func items(pages []social.Connection[string]) []string {
	var out []string
	for _, p := range pages {
		out = append(out, p.Items...)
	}
	return out
}

// TestPagesOfOutsider: an author with 5 000 ONLY_TO posts to someone else
// (or 3 000 NOT_TO posts naming the outsider) and five others. A reader's
// pages (the user's timeline, and the home timeline in pull mode, which
// reads the author's posts at read time) return the posts they may see,
// newest first, and cost the same Redis commands, page by page, as the
// pages of an author without the hidden posts: the reader's index never
// returns them. A signed-in outsider who may see only the public posts
// gets exactly the anonymous reader's pages, hasNextPage and cursors
// included.
func TestPagesOfOutsider(t *testing.T) {
	for _, kind := range []struct {
		name   string
		hidden int
		notTo  bool
	}{{"ONLY_TO another", 5000, false}, {"NOT_TO the outsider", 3000, true}} {
		for _, home := range []bool{false, true} {
			name := kind.name + ", userTimeline"
			if home {
				name = kind.name + ", home, pull mode"
			}
			t.Run(name, func(t *testing.T) { outsiderPages(t, kind.hidden, kind.notTo, home) })
		}
	}
}

func outsiderPages(t *testing.T, hidden int, notTo, home bool) {
	big := newOutsiderNet(t, hidden, notTo, redisstore.Pull)
	small := newOutsiderNet(t, 0, notTo, redisstore.Pull)
	for _, c := range []struct {
		name   string
		viewer func(n *outsiderNet) string
		want   func(n *outsiderNet) []string
	}{
		{"reader", func(n *outsiderNet) string { return n.reader }, func(n *outsiderNet) []string {
			return byIDDesc(n.public, n.toReader, n.notOutsider)
		}},
		{"outsider", func(n *outsiderNet) string { return n.outsider }, func(n *outsiderNet) []string { return byIDDesc(n.public) }},
	} {
		if notTo && c.name == "reader" {
			continue // the hidden posts are the reader's to see
		}
		t.Run(c.name, func(t *testing.T) {
			pages, cmds, hashes := big.walk(t, c.viewer(big), home)
			if got, want := items(pages), c.want(big); !slices.Equal(got, want) {
				t.Fatalf("paged %v, want %v", got, want)
			}
			_, smallCmds, smallHashes := small.walk(t, c.viewer(small), home)
			if !slices.Equal(cmds, smallCmds) || !slices.Equal(hashes, smallHashes) {
				t.Errorf("commands a page %v, post hashes read %v; without the %d hidden posts %v, %v",
					cmds, hashes, hidden, smallCmds, smallHashes)
			}
			t.Logf("%d pages: commands a page %v, post hashes read %v; Redis CPU a page %.0f µs, without the hidden posts %.0f µs",
				len(pages), cmds, hashes, big.cpuPerPage(t, c.viewer(big), home), small.cpuPerPage(t, c.viewer(small), home))
			if c.name == "outsider" && !home {
				anonymous, _, _ := big.walk(t, "", false)
				if !slices.EqualFunc(pages, anonymous, sameConnection) {
					t.Errorf("the outsider got %v\nthe anonymous reader %v", pages, anonymous)
				}
			}
		})
	}
}

func sameConnection(a, b social.Connection[string]) bool {
	return slices.Equal(a.Items, b.Items) && slices.Equal(a.Cursors, b.Cursors) &&
		a.HasNext == b.HasNext && a.End == b.End && a.HasPrevious == b.HasPrevious
}

// byIDDesc merges lists of ids, newest first.
func byIDDesc(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	slices.SortFunc(out, func(a, b string) int {
		x, _ := strconv.ParseInt(a, 10, 64)
		y, _ := strconv.ParseInt(b, 10, 64)
		return int(y - x)
	})
	return out
}

// indexOf reads the reader's index of author: each set's name (public,
// not, or the reader an only or notto set is of) → its members, for the
// readers given; empty sets left out.
func indexOf(t *testing.T, s *redisstore.Store, rdb redis.UniversalClient, author string, readers ...string) map[string][]string {
	t.Helper()
	ctx := context.Background()
	k := s.Keys()
	keys := map[string]string{"public": k.PublicPosts(author), "not": k.NotToPosts(author)}
	for _, r := range readers {
		keys["only "+r] = k.OnlyToPosts(author, r)
		keys["notto "+r] = k.NotToListed(author, r)
	}
	out := map[string][]string{}
	for name, key := range keys {
		ids, err := rdb.ZRange(ctx, key, 0, -1).Result()
		feedOK(t, err)
		if len(ids) > 0 {
			out[name] = ids
		}
	}
	return out
}

// TestPostIndexFollowsWrites: the reader's index holds each post in the
// sets its audience names, reposts (which take their original's audience,
// an ONLY_TO original's author added) included, and loses it when the
// post is deleted: by its author, or with its original (a plain repost).
func TestPostIndexFollowsWrites(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 4)
	a, r, v, x := u[0], u[1], u[2], u[3]
	pub := feedPost(t, s, a, social.NewPost{Content: "public"})
	not := feedPost(t, s, a, social.NewPost{Content: "not to x", NotTo: []string{x}})
	only := feedPost(t, s, a, social.NewPost{Content: "only to r and v", OnlyTo: []string{r, v}})
	repost, err := s.CreatePost(ctx, r, social.NewPost{RepostOf: only.ID}) // plain
	feedOK(t, err)
	quote := feedPost(t, s, r, social.NewPost{RepostOf: not.ID, Content: "see"})
	drain(t, w)
	steps := []struct {
		name string
		do   func() error
		ofA  map[string][]string
		ofR  map[string][]string
	}{
		{"written", func() error { return nil },
			map[string][]string{"public": {pub.ID}, "not": {not.ID}, "notto " + x: {not.ID}, "only " + r: {only.ID}, "only " + v: {only.ID}},
			map[string][]string{"not": {quote.ID}, "notto " + x: {quote.ID}, "only " + a: {repost.ID}, "only " + v: {repost.ID}}},
		{"quote deleted", func() error { return s.DeletePost(ctx, r, quote.ID) },
			map[string][]string{"public": {pub.ID}, "not": {not.ID}, "notto " + x: {not.ID}, "only " + r: {only.ID}, "only " + v: {only.ID}},
			map[string][]string{"only " + a: {repost.ID}, "only " + v: {repost.ID}}},
		{"ONLY_TO original deleted, its plain repost with it", func() error { return s.DeletePost(ctx, a, only.ID) },
			map[string][]string{"public": {pub.ID}, "not": {not.ID}, "notto " + x: {not.ID}},
			map[string][]string{}},
		{"the others deleted", func() error {
			feedOK(t, s.DeletePost(ctx, a, pub.ID))
			return s.DeletePost(ctx, a, not.ID)
		}, map[string][]string{}, map[string][]string{}},
	}
	for _, st := range steps {
		feedOK(t, st.do())
		drain(t, w)
		if got := indexOf(t, s, rdb, a, r, v, x); !mapsEqual(got, st.ofA) {
			t.Errorf("%s: the index of a is %v, want %v", st.name, got, st.ofA)
		}
		if got := indexOf(t, s, rdb, r, a, v, x); !mapsEqual(got, st.ofR) {
			t.Errorf("%s: the index of r is %v, want %v", st.name, got, st.ofR)
		}
	}
}

func mapsEqual(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestMigratePostIndexes: posts written without the reader's index (their
// sets deleted here) are missing from a signed-in reader's pages until
// MigratePostIndexes puts them back, each in its sets, a deleted post
// left out; a run resumes after the last user it recorded, and once done
// costs one read.
func TestMigratePostIndexes(t *testing.T) {
	s, rdb := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	a, b, v := u[0], u[1], u[2]
	var want [2][]string // each author's posts v may see, newest first
	for i, author := range []string{a, b} {
		for j, in := range []social.NewPost{
			{Content: "public"}, {Content: "not to others", NotTo: []string{u[1-i]}}, {Content: "to v", OnlyTo: []string{v}},
			{Content: "to the other", OnlyTo: []string{u[1-i]}}, {Content: "gone"},
		} {
			p := feedPost(t, s, author, in)
			if j == 4 {
				// A delete cut short: the hash gone, its UserPosts entry
				// left.
				feedOK(t, rdb.Del(ctx, s.Keys().Post(p.ID)).Err())
				feedOK(t, rdb.ZRem(ctx, s.Keys().PublicPosts(author), p.ID).Err())
				continue
			}
			if j < 3 {
				want[i] = append([]string{p.ID}, want[i]...)
			}
		}
	}
	written := [2]map[string][]string{indexOf(t, s, rdb, a, b, v), indexOf(t, s, rdb, b, a, v)}
	unindex := func(author string) {
		k := s.Keys()
		feedOK(t, rdb.Del(ctx, k.PublicPosts(author)).Err())
		feedOK(t, rdb.Del(ctx, k.NotToPosts(author)).Err())
		for _, r := range u {
			feedOK(t, rdb.Del(ctx, k.OnlyToPosts(author, r), k.NotToListed(author, r)).Err())
		}
	}
	page := func(author string) []string {
		pg, err := s.UserPage(ctx, v, author, social.PageRequest{First: 10}, readplan.PageWants{})
		feedOK(t, err)
		return social.PostIDs(pg.Posts).Items
	}
	unindex(a)
	unindex(b)
	// A run that stopped after a: a is not indexed again.
	feedOK(t, rdb.HSet(ctx, s.Keys().Layout(), "postindex2", "at:"+a).Err())
	if got := page(b); len(got) != 0 {
		t.Fatalf("before the backfill v sees %v of b", got)
	}
	n, err := s.MigratePostIndexes(ctx)
	feedOK(t, err)
	if n != 5 {
		t.Errorf("went through %d posts, want b's 5", n)
	}
	if got := indexOf(t, s, rdb, b, a, v); !mapsEqual(got, written[1]) {
		t.Errorf("b's index %v, want %v as written", got, written[1])
	}
	if got := page(b); !slices.Equal(got, want[1]) {
		t.Errorf("v sees %v of b, want %v", got, want[1])
	}
	if got := indexOf(t, s, rdb, a, b, v); len(got) != 0 {
		t.Errorf("a, before the recorded place, was indexed again: %v", got)
	}
	// From the start: everyone.
	feedOK(t, rdb.HDel(ctx, s.Keys().Layout(), "postindex2").Err())
	if _, err := s.MigratePostIndexes(ctx); err != nil {
		t.Fatal(err)
	}
	if got := indexOf(t, s, rdb, a, b, v); !mapsEqual(got, written[0]) {
		t.Errorf("a's index %v, want %v as written", got, written[0])
	}
	if got := page(a); !slices.Equal(got, want[0]) {
		t.Errorf("v sees %v of a, want %v", got, want[0])
	}
	if n, err := s.MigratePostIndexes(ctx); n != 0 || err != nil {
		t.Errorf("a run after the end: %d posts, %v", n, err)
	}
}
