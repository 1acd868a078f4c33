package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/redisstats"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// readPathNet is a small network for read-path tests: a viewer following
// three authors who posted, reposted, commented and liked.
type readPathNet struct {
	s      *feedServer
	viewer gatewaytest.User
	hook   *redisstats.Hook
	naive  *gatewaytest.Server // the same store served by graph.Naive, one key per batch
	split  *gatewaytest.Server // loaders whose every batch holds one key
}

func newReadPathNet(t *testing.T, mode redisstore.FeedMode) *readPathNet {
	t.Helper()
	s := newFeedServer(t, mode)
	ctx := context.Background()
	viewer := s.Register(t, "reader")
	var authors []gatewaytest.User
	for i := 0; i < 3; i++ {
		a := s.Register(t, "author")
		authors = append(authors, a)
		if err := s.Store.Follow(ctx, viewer.ID, a.ID); err != nil {
			t.Fatal(err)
		}
	}
	stranger := s.Register(t, "stranger")
	var posts []string
	for i := 0; i < 36; i++ {
		a := authors[i%len(authors)]
		in := social.NewPost{Content: fmt.Sprintf("post %d", i)}
		if i%4 == 3 {
			// Tags, some needing escapes in JSON (Post.tags).
			in.Content += fmt.Sprintf(" #Go #Café_%d #東京 \"#quote\" #Go", i)
		}
		switch {
		case i%6 == 5:
			in.RepostOf = posts[i-2] // a repost of a followed author's post
		case i%9 == 8:
			in.NotTo = []string{stranger.ID}
		}
		if i%5 == 1 {
			in.Source = "web"
		}
		p, err := s.Store.CreatePost(ctx, a.ID, in)
		if err != nil {
			t.Fatal(err)
		}
		posts = append(posts, p.ID)
		for c := 0; c < i%7; c++ { // up to six comments, by several users
			by := []gatewaytest.User{viewer, authors[(c+1)%3], authors[c%3]}[c%3]
			if _, err := s.Store.AddComment(ctx, by.ID, p.ID, fmt.Sprintf("comment %d on %d", c, i)); err != nil {
				t.Fatal(err)
			}
		}
		if i%4 == 0 {
			if err := s.Store.Like(ctx, viewer.ID, p.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Bookmarks of the viewer (viewerHasBookmarked) and pins of the
	// authors (pinned), on some posts and some reposted originals.
	pins := map[string]int{}
	for i, id := range posts {
		if i%3 == 0 {
			if err := s.Store.Bookmark(ctx, viewer.ID, id); err != nil {
				t.Fatal(err)
			}
		}
		if a := authors[i%len(authors)]; i%4 == 1 && pins[a.ID] < social.MaxPins {
			pins[a.ID]++
			if err := s.Store.Pin(ctx, a.ID, id); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Plain reposts: by the viewer (viewerHasReposted), and by an author
	// of a post already in the viewer's home (folded there).
	for _, r := range []struct {
		by   gatewaytest.User
		post string
	}{{viewer, posts[3]}, {viewer, posts[10]}, {authors[2], posts[0]}} {
		if _, err := s.Store.CreatePost(ctx, r.by.ID, social.NewPost{RepostOf: r.post}); err != nil {
			t.Fatal(err)
		}
	}
	// One repost whose original is then deleted: repostOf reads null.
	gone, err := s.Store.CreatePost(ctx, authors[1].ID, social.NewPost{Content: "soon gone"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Store.CreatePost(ctx, authors[0].ID, social.NewPost{Content: "repost of a deleted post", RepostOf: gone.ID}); err != nil {
		t.Fatal(err)
	}
	if err := s.Store.DeletePost(ctx, authors[1].ID, gone.ID); err != nil {
		t.Fatal(err)
	}
	// Two authors with a display name and pictures, one without.
	giveProfiles(t, s.Server, authors[0].ID, authors[1].ID)
	s.drain(t)

	n := &readPathNet{s: s, viewer: viewer, hook: redisstats.NewHook(nil)}
	n.hook.Install(s.Redis)
	n.naive = &gatewaytest.Server{Gateway: s.Gateway, Redis: s.Redis}
	n.naive.URL = gatewaytest.Serve(t, variantHandler(s.Server, graph.Naive, gateway.QueryOptions{MaxBodyBytes: 1 << 20, Limits: gqlguard.DefaultLimits(100000),
		Loaders: loader.Config{Wait: time.Nanosecond, BatchCapacity: 1}}))
	// Batch windows that split every batch, as a loaded machine may: the
	// read path's answers and round trips must not depend on them.
	n.split = &gatewaytest.Server{Gateway: s.Gateway, Redis: s.Redis}
	n.split.URL = gatewaytest.Serve(t, s.NewQueryHandler(gateway.QueryOptions{MaxBodyBytes: 1 << 20, Limits: gqlguard.DefaultLimits(100000),
		Loaders: loader.Config{Wait: time.Nanosecond, BatchCapacity: 1}}))
	return n
}

// variantHandler serves s's services through a variant of the read path
// (graph.GenericOnly, graph.Naive) with o, as the gateway serves its own.
func variantHandler(s *gatewaytest.Server, variant func(*graph.Resolver) *graph.Resolver, o gateway.QueryOptions) http.Handler {
	gw := *s.Gateway
	gw.Resolver = variant(gw.Resolver)
	return gw.NewQueryHandler(o)
}

// do runs a query and returns the response and the Redis round trips and
// commands it cost, the access-token check included.
func (n *readPathNet) do(t *testing.T, srv *gatewaytest.Server, query string, vars map[string]any) (*gatewaytest.Response, int64, int64) {
	t.Helper()
	rt, cmds := n.hook.Total.RoundTrips(), n.hook.Total.Commands()
	r := srv.MustDo(t, n.viewer.Token, query, vars)
	return r, n.hook.Total.RoundTrips() - rt, n.hook.Total.Commands() - cmds
}

func referenceQueryWithFirst(t *testing.T) string {
	t.Helper()
	return strings.Replace(strings.Replace(graph.ReferenceQuery, "query Ref {", "query Ref($first: Int) {", 1), "timeline(first: 20)", "timeline(first: $first)", 1)
}

// referenceQueryCurated is the reference query with the post fields of
// content warnings, edits, bookmarks and pins selected too.
func referenceQueryCurated(t *testing.T) string {
	t.Helper()
	return strings.Replace(referenceQueryWithFirst(t), "likesCount viewerHasLiked", "editedAt spoilerText sensitive viewerHasBookmarked pinned likesCount viewerHasLiked", 1)
}

// TestReferenceQueryRoundTrips holds the reference query to its budget of
// four Redis round trips (the token check, the home list, the posts with
// everything keyed by post, and what those name) whatever the page size,
// and checks it answers exactly what the naive one-call-per-field mode
// answers on the same data.
func TestReferenceQueryRoundTrips(t *testing.T) {
	for _, mode := range []redisstore.FeedMode{redisstore.Push, redisstore.Hybrid} {
		t.Run(string(mode), func(t *testing.T) {
			n := newReadPathNet(t, mode)
			q := referenceQueryWithFirst(t)
			n.do(t, n.s.Server, q, map[string]any{"first": 5}) // first read: a hybrid reader's list is built
			for _, first := range []int{1, 20, 100} {
				t.Run(fmt.Sprint("first=", first), func(t *testing.T) {
					vars := map[string]any{"first": first}
					r, rt, cmds := n.do(t, n.s.Server, q, vars)
					edges, _ := r.Get("timeline.edges").([]any)
					if want := min(first, 37); len(edges) != want {
						t.Fatalf("got %d edges, want %d", len(edges), want)
					}
					if rt > 4 {
						t.Errorf("reference query with first=%d took %d round trips (%d commands), budget 4", first, rt, cmds)
					}
					naive, nrt, ncmds := n.do(t, n.naive, q, vars)
					t.Logf("first=%d: %d round trips, %d commands; naive: %d round trips, %d commands", first, rt, cmds, nrt, ncmds)
					sameAsNaive(t, r, naive)
					// With the curation and content-warning fields: the
					// same round trips, at most 10 % more commands.
					_, xrt, xcmds := n.do(t, n.s.Server, referenceQueryCurated(t), vars)
					t.Logf("first=%d with editedAt spoilerText sensitive viewerHasBookmarked pinned: %d round trips, %d commands", first, xrt, xcmds)
					if xrt != rt || float64(xcmds) > 1.1*float64(cmds) {
						t.Errorf("the reference query with the curation fields: %d round trips, %d commands; without: %d, %d", xrt, xcmds, rt, cmds)
					}
				})
			}
		})
	}
}

// TestListQueriesBatch checks that list queries cost the same number of
// round trips whatever their length: one batch per kind of data. A post
// read by id alone learns its author from its hash, and the author's lock
// (a locked account's posts are its followers') costs one more round
// trip; with the post cache, which knows the author of a post the
// gateway read before, it costs none.
func TestListQueriesBatch(t *testing.T) {
	n := newReadPathNet(t, redisstore.Push)
	ctx := context.Background()
	author := n.s.Register(t, "popular")
	post, err := n.s.Store.CreatePost(ctx, author.ID, social.NewPost{Content: "likeable"})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 30; i++ {
		u := n.s.Register(t, "fan")
		if err := n.s.Store.Follow(ctx, u.ID, author.ID); err != nil {
			t.Fatal(err)
		}
		if err := n.s.Store.Like(ctx, u.ID, post.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := n.s.Store.AddComment(ctx, u.ID, post.ID, "hi"); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name, query string
		most        int64
		postCache   bool
	}{
		{"followers", `query($id: ID!, $n: Int) { user(id: $id) { followers(first: $n) { totalCount edges { node { name followersCount followingCount postsCount viewerFollows followsViewer } } } } }`, 4, false},
		{"likers", `query($p: ID!, $n: Int) { post(id: $p) { likers(first: $n) { edges { node { name followersCount viewerFollows } } } } }`, 5, false},
		{"comments", `query($p: ID!, $n: Int) { post(id: $p) { comments(first: $n) { edges { node { content author { name followersCount } } } } } }`, 5, false},
		{"likers, post cache", `query($p: ID!, $n: Int) { post(id: $p) { likers(first: $n) { edges { node { name followersCount viewerFollows } } } } }`, 4, true},
		{"comments, post cache", `query($p: ID!, $n: Int) { post(id: $p) { comments(first: $n) { edges { node { content author { name followersCount } } } } } }`, 4, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.postCache {
				n.s.Store.CachePosts(1000) // nothing is served meanwhile
			}
			var costs []int64
			// Warm up: the first call of a Lua script pays NOSCRIPT once.
			n.do(t, n.s.Server, tc.query, map[string]any{"id": author.ID, "p": post.ID, "n": 1})
			for _, size := range []int{2, 30} {
				r, rt, _ := n.do(t, n.s.Server, tc.query, map[string]any{"id": author.ID, "p": post.ID, "n": size})
				if r.Data == nil {
					t.Fatal("no data")
				}
				costs = append(costs, rt)
			}
			t.Logf("%s: %d round trips for 2 and for 30 items", tc.name, costs[1])
			if costs[0] != costs[1] || costs[1] > tc.most {
				t.Errorf("%s: %d round trips for 2 items and %d for 30: want the same, at most %d", tc.name, costs[0], costs[1], tc.most)
			}
		})
	}
}

// TestPageOfMostlyHiddenPosts reads a user timeline whose newest posts are
// nearly all hidden from the viewer, so the page takes several rounds, and
// checks the posts' counters, likes and comments against the naive mode.
func TestPageOfMostlyHiddenPosts(t *testing.T) {
	n := newReadPathNet(t, redisstore.Push)
	author, visible := mostlyHiddenAuthor(t, n)
	q := mostlyHiddenQuery
	vars := map[string]any{"u": author.ID}
	r, _, _ := n.do(t, n.s.Server, q, vars)
	naive, _, _ := n.do(t, n.naive, q, vars)
	if edges, _ := r.Get("userTimeline.edges").([]any); len(edges) != len(visible) {
		t.Fatalf("got %d posts, want the %d public ones", len(edges), len(visible))
	}
	if r.Int("userTimeline.edges.2.node.commentsCount") != 4 || r.Get("userTimeline.edges.2.node.viewerHasLiked") != true {
		t.Fatalf("the oldest page post lost its counters or like: %+v", r.Get("userTimeline.edges.2.node"))
	}
	sameAsNaive(t, r, naive)
}

// mostlyHiddenQuery reads the first page of a user timeline with counters,
// likes and comments with their authors.
const mostlyHiddenQuery = `query($u: ID!) { userTimeline(userId: $u, first: 3) { edges { node { id content likesCount commentsCount viewerHasLiked
	  comments(first: 2) { totalCount pageInfo { hasNextPage } edges { node { content author { name } } } } } } pageInfo { hasNextPage } } }`

// mostlyHiddenAuthor makes a user whose newest posts are nearly all hidden
// from the viewer (one public post in thirty, liked by the viewer, with
// four comments), and returns them and their public posts. The hidden
// ones are NOT_TO the viewer, as written before NotToListed existed (its
// key deleted): a page reads those until the index backfill ran, so it
// takes several rounds.
func mostlyHiddenAuthor(t *testing.T, n *readPathNet) (gatewaytest.User, []string) {
	t.Helper()
	ctx := context.Background()
	author := n.s.Register(t, "secretive")
	var visible []string
	for i := 0; i < 90; i++ {
		in := social.NewPost{Content: fmt.Sprintf("not for the viewer %d", i), NotTo: []string{n.viewer.ID}}
		if i%30 == 0 {
			in = social.NewPost{Content: fmt.Sprintf("public %d", i)}
		}
		p, err := n.s.Store.CreatePost(ctx, author.ID, in)
		if err != nil {
			t.Fatal(err)
		}
		if in.NotTo == nil {
			visible = append(visible, p.ID)
			for c := 0; c < 4; c++ {
				if _, err := n.s.Store.AddComment(ctx, author.ID, p.ID, fmt.Sprintf("note %d", c)); err != nil {
					t.Fatal(err)
				}
			}
			if err := n.s.Store.Like(ctx, n.viewer.ID, p.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := n.s.Redis.Del(ctx, n.s.Store.Keys().NotToListed(author.ID, n.viewer.ID)).Err(); err != nil {
		t.Fatal(err)
	}
	return author, visible
}

// sameAsNaive fails the test when the data of a response differs from the
// naive mode's answer to the same document.
func sameAsNaive(t *testing.T, r, naive *gatewaytest.Response) {
	t.Helper()
	if !reflect.DeepEqual(r.Data, naive.Data) {
		a, _ := json.Marshal(r.Data)
		b, _ := json.Marshal(naive.Data)
		t.Fatalf("differs from the naive one-call-per-field mode:\n%s\n%s", a, b)
	}
}

// TestMutationDocumentSeesItsOwnComment checks that a comment added by a
// mutation shows in a later field of the same document although an earlier
// field read the post's first comments.
func TestMutationDocumentSeesItsOwnComment(t *testing.T) {
	n := newReadPathNet(t, redisstore.Push)
	ctx := context.Background()
	author := n.s.Register(t, "poster")
	p, err := n.s.Store.CreatePost(ctx, author.ID, social.NewPost{Content: "comment me"})
	if err != nil {
		t.Fatal(err)
	}
	r := n.s.MustDo(t, n.viewer.Token, `mutation($b: ID!, $p: ID!) {
	  follow(userId: $b) { posts(first: 1) { edges { node { id comments(first: 5) { totalCount } } } } }
	  addComment(postId: $p, content: "fresh") { post { commentsCount comments(first: 5) { totalCount edges { node { content } } } } }
	}`, map[string]any{"b": author.ID, "p": p.ID})
	if got := r.Int("addComment.post.comments.totalCount"); got != 1 || r.Int("addComment.post.commentsCount") != 1 ||
		r.Str("addComment.post.comments.edges.0.node.content") != "fresh" {
		t.Fatalf("the mutation's own comment is missing: %+v", r.Get("addComment"))
	}
}
