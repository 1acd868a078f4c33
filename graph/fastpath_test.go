package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/graph/readpath"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

const fastCorpusFragments = `
fragment U on User { id name email bio createdAt __typename }
fragment P on Post {
  __typename id createdAt visibility content source likesCount repostsCount viewerHasLiked viewerHasReposted commentsCount viewerHasBookmarked pinned
  two: comments(first: 2) { totalCount pageInfo { hasNextPage endCursor } edges { cursor node { __typename id content createdAt author { ...U } } } }
  comments { totalCount edges { node { id } } }
  repostOf { __typename id visibility content createdAt likesCount commentsCount repostsCount viewerHasLiked viewerHasReposted viewerHasBookmarked pinned author { ...U } }
  content @skip(if: $skip)
  author { ...U }
}`

// TestFastPathMatchesGeneric runs documents through the timeline fast path
// and through gqlgen's generated execution, on the same data, and requires
// byte-identical responses: documents the fast path renders, and documents
// it must hand to the ordinary path (unknown fields, arguments it does not
// serve, errors).
func TestFastPathMatchesGeneric(t *testing.T) {
	n := newReadPathNet(t, redisstore.Push)
	generic := gatewaytest.Serve(t, variantHandler(n.s.Server, graph.GenericOnly, gateway.QueryOptions{MaxBodyBytes: 1 << 20, Limits: gqlguard.DefaultLimits(100000)}))
	stats := readpath.NewFastStats()
	fast := gatewaytest.Serve(t, n.s.NewQueryHandler(gateway.QueryOptions{MaxBodyBytes: 1 << 20, Limits: gqlguard.DefaultLimits(100000), FastStats: stats}))

	author := n.s.Register(t, "lonely") // no posts: empty pages
	ref := referenceQueryWithFirst(t)
	conversation(t, n)
	// The newest post's author locks: the viewer follows them, an
	// outsider does not.
	lockedID := authorOf(t, n)
	yes := true
	if _, err := redisstore.NewProfileService(n.s.Store.DB).UpdateProfile(context.Background(), lockedID, social.ProfileUpdate{Locked: &yes}); err != nil {
		t.Fatal(err)
	}
	outsider := n.s.Register(t, "outsider")
	lockedPage := `query($u: ID!) { userTimeline(userId: $u, first: 6) { edges { cursor node { id content author { name locked } } } pageInfo { hasNextPage endCursor } } }`
	cases := []fastCase{
		{"reference first=1", n.viewer.Token, ref, map[string]any{"first": 1}, true},
		{"reference first=20", n.viewer.Token, ref, map[string]any{"first": 20}, true},
		{"reference first=100", n.viewer.Token, ref, map[string]any{"first": 100}, true},
		{"reference with curation fields", n.viewer.Token, referenceQueryCurated(t), map[string]any{"first": 20}, false},
		{"bookmarks", n.viewer.Token, `query($skip: Boolean!) { bookmarks(first: 4) { edges { cursor node { ...P } } pageInfo { hasNextPage endCursor } } }` + fastCorpusFragments, map[string]any{"skip": false}, false},
		{"fragments aliases typename skip", n.viewer.Token,
			`query($n: Int, $skip: Boolean!) { t: timeline(first: $n) { __typename pageInfo { __typename hasNextPage endCursor }
			  edges { __typename c: cursor node { ...P } } } }` + fastCorpusFragments,
			map[string]any{"n": 30, "skip": true}, true},
		{"include", n.viewer.Token,
			`query($n: Int, $skip: Boolean!) { timeline(first: $n) { edges { node { ...P id @include(if: $skip) } } } }` + fastCorpusFragments,
			map[string]any{"n": 7, "skip": false}, true},
		{"tags", n.viewer.Token, `{ timeline(first: 30) { edges { node { id tags repostOf { tags } } } } }`, nil, true},
		{"tags, no reposts", n.viewer.Token, `{ timeline(first: 30) { edges { node { id content tags } } } }`, nil, true},
		{"second page", n.viewer.Token,
			`query { timeline(first: 5, after: "` + firstCursorAfter(t, n, 5) + `") { edges { cursor node { id content author { name } } } pageInfo { hasNextPage endCursor } } }`, nil, true},
		{"newer page", n.viewer.Token,
			`query($b: String, $skip: Boolean!) { timeline(first: 3, before: $b) { edges { cursor node { ...P } } pageInfo { hasNextPage endCursor hasPreviousPage startCursor } } }` + fastCorpusFragments,
			map[string]any{"b": firstCursorAfter(t, n, 9), "skip": false}, true},
		{"newer page reaching the top", n.viewer.Token,
			`query($b: String) { timeline(first: 20, before: $b) { edges { cursor node { id } } pageInfo { hasPreviousPage startCursor } } }`,
			map[string]any{"b": firstCursorAfter(t, n, 4)}, true},
		{"after and before", n.viewer.Token,
			`query($b: String) { timeline(first: 3, after: $b, before: $b) { edges { cursor } } }`,
			map[string]any{"b": firstCursorAfter(t, n, 4)}, false},
		{"user timeline of another", n.viewer.Token,
			`query($u: ID!, $skip: Boolean!) { userTimeline(userId: $u, first: 12) { edges { node { ...P } } pageInfo { hasNextPage endCursor } } }` + fastCorpusFragments,
			map[string]any{"u": authorOf(t, n), "skip": false}, true},
		{"user timeline anonymous", "",
			`query($u: ID!) { userTimeline(userId: $u) { edges { node { id content author { name email } viewerHasLiked } } } }`,
			map[string]any{"u": authorOf(t, n)}, true},
		{"empty user timeline", n.viewer.Token,
			`query($u: ID!) { userTimeline(userId: $u) { edges { node { id } } pageInfo { hasNextPage endCursor } } }`,
			map[string]any{"u": author.ID}, true},
		{"unknown user", n.viewer.Token, `{ userTimeline(userId: "999999") { edges { node { id } } } }`, nil, true},
		{"user id as an Int literal", n.viewer.Token,
			`{ userTimeline(userId: ` + authorOf(t, n) + `, first: 3) { edges { node { id content } } } }`, nil, true},
		{"user id variable sent as a number", n.viewer.Token,
			`query($u: ID!) { userTimeline(userId: $u, first: 3) { edges { node { id content } } } }`,
			map[string]any{"u": json.Number(authorOf(t, n))}, true},
		{"profile fields", n.viewer.Token,
			`query($u: ID!) { userTimeline(userId: $u, first: 5) { edges { node { author { displayName
			  avatar(size: 48) { __typename id kind url mimeType bytes width height duration alt } big: avatar { id url width }
			  header(size: 700) { id url width height } h: header { url } } } } } }`,
			map[string]any{"u": authorOf(t, n)}, true},
		{"profile fields on every author", n.viewer.Token,
			`query($s: Int) { timeline(first: 40) { edges { node { author { name displayName avatar(size: $s) { url width } header { url } }
			  comments(first: 2) { edges { node { author { displayName avatar { url } } } } }
			  repostOf { author { displayName avatar(size: 0) { id url } } } } } } }`,
			map[string]any{"s": 96}, true},
		{"locked authors", n.viewer.Token, `{ timeline(first: 12) { edges { node { id author { name locked } repostOf { id author { locked } } } } } }`, nil, true},
		{"a locked author's page to a follower", n.viewer.Token, lockedPage, map[string]any{"u": lockedID}, true},
		{"a locked author's page to a non-follower", outsider.Token, lockedPage, map[string]any{"u": lockedID}, true},
		{"a locked author's page, anonymous", "", lockedPage, map[string]any{"u": lockedID}, true},
		// Handed to the ordinary path:
		{"viewerRequestedFollow", n.viewer.Token, `{ timeline(first: 4) { edges { node { id author { locked viewerRequestedFollow } } } } }`, nil, false},
		{"counts of authors", n.viewer.Token, `{ timeline(first: 4) { edges { node { id author { name followersCount viewerFollows } } } } }`, nil, false},
		{"comments after a cursor", n.viewer.Token, `{ timeline(first: 4) { edges { node { id comments(first: 2, after: "djE6OTk5OTk") { edges { node { id } } } } } } }`, nil, false},
		{"likers", n.viewer.Token, `{ timeline(first: 4) { edges { node { id likers { totalCount } } } } }`, nil, false},
		{"repost of repost", n.viewer.Token, `{ timeline(first: 9) { edges { node { id repostOf { id repostOf { id } } } } } }`, nil, false},
		{"bad first", n.viewer.Token, `{ timeline(first: 0) { edges { cursor } } }`, nil, false},
		{"bad comments first", n.viewer.Token, `{ timeline(first: 3) { edges { node { comments(first: 500) { totalCount } } } } }`, nil, false},
		{"bad cursor", n.viewer.Token, `{ timeline(after: "nope") { edges { cursor } } }`, nil, false},
		{"cursor variable sent as a number", n.viewer.Token,
			`query($a: String) { timeline(first: 2, after: $a) { edges { cursor } } }`, map[string]any{"a": 12345}, false},
		{"anonymous home", "", `{ timeline { edges { cursor } } }`, nil, false},
		{"edits and answers", n.viewer.Token, `{ timeline(first: 12) { edges { node { id content editedAt spoilerText sensitive
		    edits { content spoilerText sensitive replacedAt }
		    comments(first: 3) { edges { node { id inReplyTo { id content } replies(first: 2) { totalCount pageInfo { hasNextPage endCursor }
		      edges { node { id content inReplyTo { id } author { name } } } } } } } } } } }`, nil, false},
		{"two root fields", n.viewer.Token, `{ a: timeline(first: 2) { edges { node { id } } } me { name } b: timeline(first: 3) { pageInfo { endCursor } } }`, nil, true},
	}
	runFastCases(t, n, generic, fast, stats, cases)

	// A suspended author's posts and profile are missing on every path,
	// the fast one as the ordinary one.
	suspect := authorOf(t, n) // the author of the newest post
	if err := gateway.NewModeration(n.s.Store, nil, gateway.ModerationConfig{}).Suspend(context.Background(), suspect); err != nil {
		t.Fatal(err)
	}
	if authorOf(t, n) == suspect {
		t.Fatal("the suspended author's post is still the newest of the timeline")
	}
	runFastCases(t, n, generic, fast, stats, []fastCase{
		{"suspended: reference first=20", n.viewer.Token, ref, map[string]any{"first": 20}, true},
		{"suspended: no comments", n.viewer.Token, `{ timeline(first: 30) { edges { node { id author { name } repostOf { id author { name } } } } } }`, nil, true},
		{"suspended: user timeline", n.viewer.Token,
			`query($u: ID!) { userTimeline(userId: $u) { edges { node { id } } } }`, map[string]any{"u": suspect}, true},
	})
}

// fastCase is a document the fast path and generic execution both run.
type fastCase struct {
	name, token, query string
	vars               map[string]any
	fast               bool // the fast path must render it
}

// runFastCases runs each case through generic execution, the fast path
// and loaders with split batches, and requires the same answers.
func runFastCases(t *testing.T, n *readPathNet, generic, fast string, stats *readpath.FastStats, cases []fastCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, want := gatewaytest.PostRaw(t, generic, tc.token, tc.query, tc.vars)
			served := stats.Served()
			_, got := gatewaytest.PostRaw(t, fast, tc.token, tc.query, tc.vars)
			if took := stats.Served() > served; took != tc.fast {
				t.Errorf("fast path taken: %v, want %v", took, tc.fast)
			}
			if tc.fast && bytes.Contains(got, []byte(`"errors"`)) {
				t.Errorf("a fast-path case answered with errors: %s", got)
			}
			if !bytes.Equal(got, want) && !sameErrors(got, want) {
				t.Fatalf("fast path differs from generic execution\nfast:    %s\ngeneric: %s", got, want)
			}
			// The ordinary path again, its loaders' batches split key by key.
			_, split := gatewaytest.PostRaw(t, n.split.URL, tc.token, tc.query, tc.vars)
			if !bytes.Equal(split, want) && !sameErrors(split, want) {
				t.Fatalf("split batches differ from whole ones\nsplit: %s\nwhole: %s", split, want)
			}
		})
	}
}

// TestFastPathMatchesGenericFiltered: with keyword filters in every
// context, the fast path answers as generic execution does (the filters
// act in the store, below both).
func TestFastPathMatchesGenericFiltered(t *testing.T) {
	n := newReadPathNet(t, redisstore.Push)
	generic := gatewaytest.Serve(t, variantHandler(n.s.Server, graph.GenericOnly, gateway.QueryOptions{MaxBodyBytes: 1 << 20, Limits: gqlguard.DefaultLimits(100000)}))
	stats := readpath.NewFastStats()
	fast := gatewaytest.Serve(t, n.s.NewQueryHandler(gateway.QueryOptions{MaxBodyBytes: 1 << 20, Limits: gqlguard.DefaultLimits(100000), FastStats: stats}))
	conversation(t, n)
	for _, f := range []string{
		`{phrase: "post 3", context: [HOME]}`,
		`{phrase: "post 7", context: [HOME, PUBLIC]}`,
		`{phrase: "café", wholeWord: false, context: [PUBLIC]}`,
		`{phrase: "comment 1", context: [COMMENTS]}`,
	} {
		n.s.MustDo(t, n.viewer.Token, `mutation { addFilter(input: `+f+`) { id } }`, nil)
	}
	ref := referenceQueryWithFirst(t)
	const page = `query($u: ID!) { userTimeline(userId: $u, first: 7) { edges { cursor node { id content comments(first: 3) { edges { node { id content } } pageInfo { hasNextPage } } } } pageInfo { hasNextPage endCursor } } }`
	// A page whose first comments the filters leave short of what a
	// post's comments(first:) asks is handed to the ordinary path, which
	// reads that post's comments on (fast: false).
	runFastCases(t, n, generic, fast, stats, []fastCase{
		{"reference first=1", n.viewer.Token, ref, map[string]any{"first": 1}, true},
		{"reference first=20", n.viewer.Token, ref, map[string]any{"first": 20}, false},
		{"reference first=100", n.viewer.Token, ref, map[string]any{"first": 100}, false},
		{"second page", n.viewer.Token,
			`query { timeline(first: 5, after: "` + firstCursorAfter(t, n, 5) + `") { edges { cursor node { id content repostOf { content } } } pageInfo { hasNextPage endCursor } } }`, nil, true},
		{"no comments", n.viewer.Token, `{ timeline(first: 30) { edges { node { id content author { name } repostOf { id content } } } pageInfo { hasNextPage endCursor } } }`, nil, true},
		{"comments", n.viewer.Token, `{ timeline(first: 30) { edges { node { id comments(first: 2) { totalCount edges { cursor node { id content } } pageInfo { hasNextPage } } } } } }`, nil, false},
		{"user timeline", n.viewer.Token, page, map[string]any{"u": authorOf(t, n)}, false},
		{"filters", n.viewer.Token, `{ filters { phrase wholeWord context expiresAt } }`, nil, false},
	})
	// And the filters hide what they name, on the fast path too.
	_, body := gatewaytest.PostRaw(t, fast, n.viewer.Token, `{ timeline(first: 100) { edges { node { content } } } }`, nil)
	for _, c := range []string{`"post 3"`, `"post 7"`} {
		if bytes.Contains(body, []byte(c)) {
			t.Errorf("the home page shows %s, which a filter hides", c)
		}
	}
	if !bytes.Contains(body, []byte(`"post 4"`)) {
		t.Errorf("the home page lacks post 4, which no filter hides: %s", body)
	}
}

// sameErrors reports whether two error responses are the same but for the
// order of their errors, which gqlgen's concurrent resolvers do not fix.
func sameErrors(a, b []byte) bool {
	type resp struct {
		Data   json.RawMessage   `json:"data"`
		Errors []json.RawMessage `json:"errors"`
	}
	var ra, rb resp
	if json.Unmarshal(a, &ra) != nil || json.Unmarshal(b, &rb) != nil || len(ra.Errors) == 0 {
		return false
	}
	if !bytes.Equal(ra.Data, rb.Data) || len(ra.Errors) != len(rb.Errors) {
		return false
	}
	count := map[string]int{}
	for _, e := range ra.Errors {
		count[string(e)]++
	}
	for _, e := range rb.Errors {
		count[string(e)]--
	}
	for _, c := range count {
		if c != 0 {
			return false
		}
	}
	return true
}

func firstCursorAfter(t *testing.T, n *readPathNet, k int) string {
	t.Helper()
	r := n.s.MustDo(t, n.viewer.Token, fmt.Sprintf(`{ timeline(first: %d) { pageInfo { endCursor } } }`, k), nil)
	return r.Str("timeline.pageInfo.endCursor")
}

func authorOf(t *testing.T, n *readPathNet) string {
	t.Helper()
	r := n.s.MustDo(t, n.viewer.Token, `{ timeline(first: 1) { edges { node { author { id } } } } }`, nil)
	return r.Str("timeline.edges.0.node.author.id")
}

// TestFastPathHandsOverItsPage reads pages the fast path fetches but
// cannot render (a user timeline and a home timeline whose later-round
// posts lack their comments' authors) and checks
// the ordinary path renders them from the fetched page: the request costs
// no more Redis round trips or commands than gqlgen's execution alone, the
// answers are the same, and the fallback is counted with its reason.
func TestFastPathHandsOverItsPage(t *testing.T) {
	n := newReadPathNet(t, redisstore.Push)
	author, _ := mostlyHiddenAuthor(t, n)
	if err := n.s.Store.Follow(context.Background(), n.viewer.ID, author.ID); err != nil {
		t.Fatal(err)
	}
	// A followed author whose newest posts are deleted: the home page's
	// first rounds find nothing to show.
	ctx := context.Background()
	deleter := n.s.Register(t, "deleter")
	if err := n.s.Store.Follow(ctx, n.viewer.ID, deleter.ID); err != nil {
		t.Fatal(err)
	}
	var gone []string
	for i := 0; i < 40; i++ {
		p, err := n.s.Store.CreatePost(ctx, deleter.ID, social.NewPost{Content: fmt.Sprint("regret ", i)})
		if err != nil {
			t.Fatal(err)
		}
		gone = append(gone, p.ID)
	}
	n.s.drain(t)
	for _, id := range gone {
		if err := n.s.Store.DeletePost(ctx, deleter.ID, id); err != nil {
			t.Fatal(err)
		}
	}
	stats := readpath.NewFastStats()
	fast := &gatewaytest.Server{Gateway: n.s.Gateway, Redis: n.s.Redis}
	fast.URL = gatewaytest.Serve(t, n.s.NewQueryHandler(gateway.QueryOptions{MaxBodyBytes: 1 << 20, Limits: gqlguard.DefaultLimits(100000), FastStats: stats}))
	generic := &gatewaytest.Server{Gateway: n.s.Gateway, Redis: n.s.Redis}
	generic.URL = gatewaytest.Serve(t, variantHandler(n.s.Server, graph.GenericOnly, gateway.QueryOptions{MaxBodyBytes: 1 << 20, Limits: gqlguard.DefaultLimits(100000)}))
	cases := []struct {
		name, query string
		vars        map[string]any
	}{
		{"user timeline", mostlyHiddenQuery, map[string]any{"u": author.ID}},
		{"home timeline", strings.Replace(strings.Replace(mostlyHiddenQuery, "userTimeline(userId: $u, first: 3)", "timeline(first: 3)", 1), "query($u: ID!)", "query", 1), nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n.do(t, generic, tc.query, tc.vars) // warm up
			want, grt, gcmds := n.do(t, generic, tc.query, tc.vars)
			before := stats.Fallbacks(readpath.FallbackIncompletePage)
			got, rt, cmds := n.do(t, fast, tc.query, tc.vars)
			t.Logf("fast path handing over: %d round trips, %d commands; generic: %d, %d", rt, cmds, grt, gcmds)
			if stats.Fallbacks(readpath.FallbackIncompletePage) != before+1 {
				t.Fatalf("the fast path did not decline the page as incomplete (served %d)", stats.Served())
			}
			if rt > grt || cmds > gcmds {
				t.Errorf("handing over cost %d round trips and %d commands, more than the ordinary path's %d and %d", rt, cmds, grt, gcmds)
			}
			sameAsNaive(t, got, want)
		})
	}
}

// conversation edits the newest posts of the viewer's home and makes
// their comments answer each other, for the documents that select edits
// and answers.
func conversation(t *testing.T, n *readPathNet) {
	t.Helper()
	ctx := context.Background()
	r := n.s.MustDo(t, n.viewer.Token, `{ timeline(first: 12) { edges { node { id author { id } repostOf { id }
	  comments(first: 6) { edges { node { id author { id } } } } } } } }`, nil)
	edges, _ := r.Get("timeline.edges").([]any)
	for i := range edges {
		at := fmt.Sprintf("timeline.edges.%d.node.", i)
		id, author := r.Str(at+"id"), r.Str(at+"author.id")
		if i%3 == 0 && r.Get(at+"repostOf") == nil {
			for v := range 2 {
				_, err := n.s.Store.EditPost(ctx, author, id, social.EditPost{Content: fmt.Sprintf("edit %d of %s", v, id), SpoilerText: "cw", Sensitive: v == 1})
				if err != nil {
					t.Fatal(err)
				}
			}
		}
		cs, _ := r.Get(at + "comments.edges").([]any)
		for j := range cs {
			c := r.Str(fmt.Sprintf("%scomments.edges.%d.node.id", at, j))
			if _, err := n.s.Store.AddReply(ctx, n.viewer.ID, id, fmt.Sprintf("answer to %s", c), c); err != nil {
				t.Fatal(err)
			}
		}
	}
	n.s.drain(t)
	r = n.s.MustDo(t, n.viewer.Token, `{ timeline(first: 12) { edges { node { comments(first: 9) { edges { node {
	  replies { totalCount } inReplyTo { id } } } } } } } }`, nil)
	answers, answered := 0, 0
	for _, e := range r.Get("timeline.edges").([]any) {
		for _, c := range e.(map[string]any)["node"].(map[string]any)["comments"].(map[string]any)["edges"].([]any) {
			node := c.(map[string]any)["node"].(map[string]any)
			if node["inReplyTo"] != nil {
				answers++
			}
			if node["replies"].(map[string]any)["totalCount"].(float64) > 0 {
				answered++
			}
		}
	}
	if answers == 0 || answered == 0 {
		t.Fatalf("%d answers, %d comments answered", answers, answered)
	}
}
