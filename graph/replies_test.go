package graph_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// TestRepliesRoundTrips: a page of a post's comments with their first
// answers costs the same round trips at 1 and at 50 comments (the
// answers of a level's comments are one batch), and a thread of 200
// answers read in pages of 20 costs the same for every page; each as the
// naive one-call-per-field mode answers.
func TestRepliesRoundTrips(t *testing.T) {
	n := newReadPathNet(t, redisstore.Push)
	ctx := context.Background()
	author := n.viewer.ID
	post, err := n.s.Store.CreatePost(ctx, author, social.NewPost{Content: "a thread"})
	if err != nil {
		t.Fatal(err)
	}
	var thread string
	for i := range 50 {
		c, err := n.s.Store.AddComment(ctx, author, post.ID, fmt.Sprint("comment ", i))
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			thread = c.ID
		}
		for j := range 3 {
			if _, err := n.s.Store.AddReply(ctx, author, post.ID, fmt.Sprintf("answer %d to %d", j, i), c.ID); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := 3; i < 200; i++ {
		if _, err := n.s.Store.AddReply(ctx, author, post.ID, fmt.Sprint("more ", i), thread); err != nil {
			t.Fatal(err)
		}
	}
	n.s.drain(t)

	page := `query($p: ID!, $first: Int) { post(id: $p) { comments(first: $first) { edges { node { id content
	  replies(first: 3) { totalCount edges { node { id content author { name } inReplyTo { id } } } } } } } } }`
	var costs []int64
	for _, first := range []int{1, 50} {
		vars := map[string]any{"p": post.ID, "first": first}
		r, rt, cmds := n.do(t, n.s.Server, page, vars)
		naive, _, _ := n.do(t, n.naive, page, vars)
		sameAsNaive(t, r, naive)
		if got := len(r.Get("post.comments.edges").([]any)); got != first {
			t.Fatalf("%d comments, want %d", got, first)
		}
		t.Logf("comments with their first answers, first=%d: %d round trips, %d commands", first, rt, cmds)
		costs = append(costs, rt)
	}
	if costs[0] != costs[1] {
		t.Errorf("round trips of comments with their answers at 1 and 50 comments: %v, want the same", costs)
	}

	threadDoc := `query($c: ID!, $after: String) { comment(id: $c) { replies(first: 20, after: $after) { totalCount
	  pageInfo { hasNextPage endCursor } edges { node { id content author { name } } } } } }`
	var after any
	var pages []int64
	seen := 0
	for {
		vars := map[string]any{"c": thread, "after": after}
		r, rt, _ := n.do(t, n.s.Server, threadDoc, vars)
		naive, _, _ := n.do(t, n.naive, threadDoc, vars)
		sameAsNaive(t, r, naive)
		seen += len(r.Get("comment.replies.edges").([]any))
		pages = append(pages, rt)
		if r.Get("comment.replies.pageInfo.hasNextPage") != true {
			break
		}
		after = r.Str("comment.replies.pageInfo.endCursor")
	}
	if seen != 200 || len(pages) != 10 {
		t.Fatalf("read %d answers in %d pages, want 200 in 10", seen, len(pages))
	}
	t.Logf("a thread of 200 answers in pages of 20: round trips per page %v", pages)
	for _, c := range pages[1:] {
		if c != pages[0] {
			t.Errorf("round trips per page of the thread: %v, want the same for each", pages)
			break
		}
	}
}

// TestReferencePageWithConversationFields: the reference page with
// editedAt, spoilerText and sensitive selected, on a home whose posts
// were edited and whose comments answer each other, keeps the reference
// page's round trips, and its commands grow by at most 10 %.
func TestReferencePageWithConversationFields(t *testing.T) {
	n := newReadPathNet(t, redisstore.Push)
	conversation(t, n)
	ref := referenceQueryWithFirst(t)
	with := strings.Replace(ref, "id content createdAt", "id content createdAt editedAt spoilerText sensitive", 1)
	if with == ref {
		t.Fatal("the reference query changed: no field list to add to")
	}
	n.do(t, n.s.Server, ref, map[string]any{"first": 5}) // warm up the scripts
	vars := map[string]any{"first": 20}
	_, rt, cmds := n.do(t, n.s.Server, ref, vars)
	r, wrt, wcmds := n.do(t, n.s.Server, with, vars)
	naive, _, _ := n.do(t, n.naive, with, vars)
	sameAsNaive(t, r, naive)
	t.Logf("reference page of 20: %d round trips, %d commands; with editedAt, spoilerText, sensitive: %d round trips, %d commands", rt, cmds, wrt, wcmds)
	if wrt != rt || float64(wcmds) > 1.1*float64(cmds) {
		t.Errorf("with the conversation fields: %d round trips, %d commands; without: %d, %d", wrt, wcmds, rt, cmds)
	}
}
