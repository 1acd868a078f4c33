package main

import (
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redistest"
)

// TestEditAcrossProcesses: a post edited through one gateway process
// reads edited at once through another that holds the post in its post
// cache, on a timeline page and on post(id), with its earlier version.
func TestEditAcrossProcesses(t *testing.T) {
	env := redistest.WithEnv(t, map[string]string{
		"REDIS_PREFIX": redistest.Prefix(t),
		"JWT_SECRET":   testSecret,
	})
	a, b := startProcess(t, env), startProcess(t, env)
	token := func(name string) string {
		r := gatewaytest.Post(t, a, "", `mutation($n: String!, $e: String!) { register(input: {name: $n, email: $e, password: "password123"}) { accessToken } }`,
			map[string]any{"n": name, "e": name + "@example.com"})
		if r.Code() != "" {
			t.Fatalf("register %s: %+v", name, r)
		}
		return r.Str("register.accessToken")
	}
	alice, bob := token("alice_edit"), token("bob_edit")
	r := gatewaytest.Post(t, a, alice, `mutation { createPost(input: {content: "before"}) { id author { id } } }`, nil)
	id, author := r.Str("createPost.id"), r.Str("createPost.author.id")
	const read = `query($u: ID!, $p: ID!) { userTimeline(userId: $u, first: 5) { edges { node { id content editedAt } } }
	  post(id: $p) { content spoilerText editedAt edits { content } } }`
	vars := map[string]any{"u": author, "p": id}
	for range 2 { // the second read from the other process's post cache
		if r := gatewaytest.Post(t, b, bob, read, vars); r.Str("post.content") != "before" || r.Str("userTimeline.edges.0.node.content") != "before" {
			t.Fatalf("read before the edit: %+v", r)
		}
	}
	if r := gatewaytest.Post(t, a, alice, `mutation($p: ID!) { editPost(id: $p, input: {content: "after", spoilerText: "cw"}) { id } }`, vars); r.Code() != "" {
		t.Fatalf("edit: %+v", r)
	}
	r = gatewaytest.Post(t, b, bob, read, vars)
	if r.Str("post.content") != "after" || r.Str("post.spoilerText") != "cw" || r.Get("post.editedAt") == nil ||
		r.Str("post.edits.0.content") != "before" || r.Str("userTimeline.edges.0.node.content") != "after" ||
		r.Get("userTimeline.edges.0.node.editedAt") == nil {
		t.Fatalf("read through the other process at once after the edit: %+v", r)
	}
}
