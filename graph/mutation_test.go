package graph_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// TestMutationFieldsReadTheirWrites checks that a mutation field, and
// every field below it, reads what it and the mutation fields before it in
// the same document wrote, though earlier fields read the same counters,
// flags, lists and profiles: each mutation field has loaders of its own.
func TestMutationFieldsReadTheirWrites(t *testing.T) {
	s := newFeedServer(t, redisstore.Push)
	viewer := s.Register(t, "writer")
	author := s.Register(t, "author")
	cases := []struct {
		name, query string
		want        map[string]any // path → value
	}{
		{"like, then read", `mutation($p: ID!) { likePost(postId: $p) { likesCount viewerHasLiked } }`,
			map[string]any{"likePost.likesCount": 1, "likePost.viewerHasLiked": true}},
		{"like, unlike, like", `mutation($p: ID!) {
			a: likePost(postId: $p) { likesCount viewerHasLiked likers(first: 5) { totalCount } }
			b: unlikePost(postId: $p) { likesCount viewerHasLiked likers(first: 5) { totalCount } }
			c: likePost(postId: $p) { likesCount viewerHasLiked likers(first: 5) { totalCount } } }`,
			map[string]any{"a.likesCount": 1, "a.viewerHasLiked": true, "a.likers.totalCount": 1,
				"b.likesCount": 0, "b.viewerHasLiked": false, "b.likers.totalCount": 0,
				"c.likesCount": 1, "c.viewerHasLiked": true, "c.likers.totalCount": 1}},
		{"two comments", `mutation($p: ID!) {
			a: addComment(postId: $p, content: "one") { post { commentsCount comments(first: 5) { totalCount } } }
			b: addComment(postId: $p, content: "two") { post { commentsCount comments(first: 5) { totalCount edges { node { content } } } } } }`,
			map[string]any{"a.post.commentsCount": 1, "a.post.comments.totalCount": 1,
				"b.post.commentsCount": 2, "b.post.comments.totalCount": 2, "b.post.comments.edges.0.node.content": "two"}},
		{"follow, unfollow", `mutation($u: ID!) {
			a: follow(userId: $u) { followersCount viewerFollows followers(first: 5) { totalCount } }
			b: unfollow(userId: $u) { followersCount viewerFollows followers(first: 5) { totalCount } } }`,
			map[string]any{"a.followersCount": 1, "a.viewerFollows": true, "a.followers.totalCount": 1,
				"b.followersCount": 0, "b.viewerFollows": false, "b.followers.totalCount": 0}},
		{"like, then repost", `mutation($p: ID!) {
			a: likePost(postId: $p) { repostsCount viewerHasReposted author { postsCount } }
			b: createPost(input: {repostOf: $p}) { author { postsCount } repostOf { repostsCount viewerHasReposted likesCount } } }`,
			map[string]any{"a.repostsCount": 0, "a.viewerHasReposted": false,
				"b.repostOf.repostsCount": 1, "b.repostOf.viewerHasReposted": true, "b.repostOf.likesCount": 1, "b.author.postsCount": 1}},
		{"two bios", `mutation {
			a: updateProfile(input: {bio: "one"}) { bio }
			b: updateProfile(input: {bio: "two"}) { bio } }`,
			map[string]any{"a.bio": "one", "b.bio": "two"}},
		// A login shows the account's private fields to the rest of the
		// document, as its owner sees them.
		{"log in, then follow", `mutation($u: ID!, $login: String!, $pw: String!) {
			login(input: {login: $login, password: $pw}) { user { id } }
			follow(userId: $u) { email } }`,
			map[string]any{"follow.email": author.Name + "@example.com"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.Store.CreatePost(context.Background(), author.ID, social.NewPost{Content: "for " + tc.name})
			if err != nil {
				t.Fatal(err)
			}
			r := s.MustDo(t, viewer.Token, tc.query, map[string]any{"p": p.ID, "u": author.ID, "login": author.Name, "pw": gatewaytest.Password})
			for path, want := range tc.want {
				if got := r.Get(path); fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s = %v, want %v", path, got, want)
				}
			}
		})
	}
}
