package graph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// nestedListsNet is readPathNet with more posts (so a page of 40 is full),
// likers on every post and followers on every liker.
func nestedListsNet(t *testing.T) *readPathNet {
	t.Helper()
	n := newReadPathNet(t, redisstore.Push)
	ctx := context.Background()
	prolific := n.s.Register(t, "prolific")
	if err := n.s.Store.Follow(ctx, n.viewer.ID, prolific.ID); err != nil {
		t.Fatal(err)
	}
	fans := make([]gatewaytest.User, 8)
	for i := range fans {
		fans[i] = n.s.Register(t, "fan")
	}
	for i := range fans {
		for j := 1; j <= 3; j++ { // each fan has followers among the others
			if err := n.s.Store.Follow(ctx, fans[(i+j)%len(fans)].ID, fans[i].ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, f := range fans { // fans post, and like each other's posts
		for k := 0; k < 3; k++ {
			p, err := n.s.Store.CreatePost(ctx, f.ID, social.NewPost{Content: fmt.Sprint("fan post ", k)})
			if err != nil {
				t.Fatal(err)
			}
			if err := n.s.Store.Like(ctx, fans[(i+1)%len(fans)].ID, p.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	// The newest posts look like the others: comments, and a repost.
	var first string
	for i := 0; i < 10; i++ {
		in := social.NewPost{Content: fmt.Sprint("more ", i)}
		if i%3 == 2 {
			in.RepostOf = first
		}
		p, err := n.s.Store.CreatePost(ctx, prolific.ID, in)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = p.ID
		}
		if _, err := n.s.Store.AddComment(ctx, fans[i%len(fans)].ID, p.ID, "nice"); err != nil {
			t.Fatal(err)
		}
	}
	n.s.drain(t)
	r := n.s.MustDo(t, n.viewer.Token, `{ timeline(first: 100) { edges { node { id } } } }`, nil)
	edges, _ := r.Get("timeline.edges").([]any)
	if len(edges) < 40 {
		t.Fatalf("the net's timeline has %d posts, want at least 40", len(edges))
	}
	for i := range edges {
		id := r.Str(fmt.Sprintf("timeline.edges.%d.node.id", i))
		for j, f := range fans {
			if (i+j)%3 != 0 {
				if err := n.s.Store.Like(ctx, f.ID, id); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	return n
}

// TestNestedListsRoundTrips holds pages with lists nested two levels deep
// (a post's likers and their followers, a post's author's followers, a
// post's comments and their authors' followers, likers' own posts and
// their likers) to a budget of Redis round trips that does not depend on
// the page size, and to the answers of the naive one-call-per-field mode.
func TestNestedListsRoundTrips(t *testing.T) {
	n := nestedListsNet(t)
	cases := []struct {
		name, query string
		budget      int64
	}{
		{"likers then followers", `query($first: Int) { timeline(first: $first) { edges { node { id
		    likers(first: 5) { totalCount edges { cursor node { name followersCount followers(first: 3) { totalCount pageInfo { hasNextPage } edges { node { name } } } } } }
		} } } }`, 7},
		{"author followers and likers following", `query($first: Int) { timeline(first: $first) { edges { node { id
		    author { name followers(first: 3) { totalCount edges { node { id name viewerFollows } } } }
		    likers(first: 2) { edges { node { following(first: 4) { totalCount edges { node { name } } } } } }
		} } } }`, 7},
		{"comments then their authors' lists", `query($first: Int) { timeline(first: $first) { edges { node { id
		    comments(first: 3) { edges { node { content author { name followers(first: 2) { edges { node { name } } } } } } }
		    repostOf { id likers(first: 2) { totalCount edges { node { name } } } }
		} } } }`, 8},
		{"the reference page with author counters and likers", `query($first: Int) { timeline(first: $first) { edges { cursor node {
		    id content createdAt
		    author { id name followersCount viewerFollows }
		    likesCount viewerHasLiked commentsCount
		    likers(first: 5) { totalCount edges { node { id name } } }
		    comments(first: 3) { edges { node { id content author { id name } } } }
		    repostOf { id content author { id name } }
		} } pageInfo { hasNextPage endCursor } } }`, 7},
		{"likers' own posts and their likers", `query($first: Int) { timeline(first: $first) { edges { node { id
		    likers(first: 3) { edges { node { name posts(first: 2) { pageInfo { hasNextPage } edges { node { id content likesCount author { name }
		      likers(first: 2) { totalCount edges { node { name } } } } } } } } }
		    author { posts(first: 1) { edges { cursor node { id viewerHasLiked } } } }
		} } } }`, 11},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			n.do(t, n.s.Server, tc.query, map[string]any{"first": 1}) // warm up the scripts
			var costs []int64
			for _, first := range []int{1, 5, 20, 40, 100} {
				vars := map[string]any{"first": first}
				r, rt, cmds := n.do(t, n.s.Server, tc.query, vars)
				if len(r.Errors) > 0 {
					t.Fatalf("errors: %v", r.Errors)
				}
				naive, nrt, _ := n.do(t, n.naive, tc.query, vars)
				split, srt, _ := n.do(t, n.split, tc.query, vars)
				t.Logf("first=%d: %d round trips, %d commands; naive: %d round trips; split batches: %d", first, rt, cmds, nrt, srt)
				sameAsNaive(t, r, naive)
				sameAsNaive(t, split, naive)
				costs = append(costs, rt, srt)
			}
			// The budget is the query's depth's: a few round trips per
			// level whatever the page size. (A level may cost one fewer
			// when the loaders' caches already hold all its users.)
			for _, c := range costs {
				if c > tc.budget {
					t.Errorf("round trips at first = 1, 5, 20, 40, 100 (whole batches, split ones): %v; want at most %d whatever first is and however batches split", costs, tc.budget)
					break
				}
			}
		})
	}
}

// TestNestedListErrorsAndEdits checks that the read-ahead leaves errors to
// the fields they belong to (a bad cursor or an unknown user deep in a
// page fails that field only, with its code and path, as in the naive
// mode) and that a mutation's later fields read lists afresh.
func TestNestedListErrorsAndEdits(t *testing.T) {
	n := nestedListsNet(t)
	cases := []struct{ name, query, code string }{
		{"bad cursor below likers", `{ timeline(first: 3) { edges { node { id likers(first: 2) { edges { node { name followers(first: 2, after: "nope") { totalCount } } } } } } } }`, "BAD_USER_INPUT"},
		{"unknown user below authors", `{ timeline(first: 3) { edges { node { author { commonFollowing(with: "999999", first: 2) { totalCount } } } } } }`, "NOT_FOUND"},
		{"first out of range below comments", `{ timeline(first: 3) { edges { node { comments(first: 2) { edges { node { author { following(first: 0) { totalCount } } } } } } } } }`, "BAD_USER_INPUT"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := n.s.Do(t, n.viewer.Token, tc.query, nil)
			naive := n.naive.Do(t, n.viewer.Token, tc.query, nil)
			if r.Code() != tc.code || naive.Code() != tc.code {
				t.Fatalf("codes %q (naive %q), want %q: %+v", r.Code(), naive.Code(), tc.code, r.Errors)
			}
			if len(r.Errors) != len(naive.Errors) {
				t.Fatalf("%d errors, naive %d", len(r.Errors), len(naive.Errors))
			}
		})
	}

	t.Run("a mutation's later fields see its edits", func(t *testing.T) {
		someone := n.s.Register(t, "someone")
		r := n.s.MustDo(t, n.viewer.Token, `mutation($u: ID!) {
		  a: unfollow(userId: $u) { followers(first: 5) { totalCount edges { node { id } } } }
		  b: follow(userId: $u) { followers(first: 5) { totalCount edges { node { id } } } }
		}`, map[string]any{"u": someone.ID})
		if r.Int("a.followers.totalCount") != 0 || r.Int("b.followers.totalCount") != 1 || r.Str("b.followers.edges.0.node.id") != n.viewer.ID {
			t.Fatalf("followers after unfollow and follow: %+v %+v", r.Get("a"), r.Get("b"))
		}
	})
}
