package graph_test

import (
	"strings"
	"sync"
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

const (
	engCreatePostDoc = `mutation($i: CreatePostInput!) { createPost(input: $i) { id } }`
	likeDoc          = `mutation($p: ID!) { likePost(postId: $p) { id likesCount viewerHasLiked } }`
	unlikeDoc        = `mutation($p: ID!) { unlikePost(postId: $p) { id likesCount viewerHasLiked } }`
	addCommentDoc    = `mutation($p: ID!, $c: String!) { addComment(postId: $p, content: $c) {
		id content author { id } post { id commentsCount } } }`
	deleteCommentDoc = `mutation($id: ID!) { deleteComment(id: $id) }`
	engPostQuery     = `query($p: ID!, $likersAfter: String, $commentsAfter: String) { post(id: $p) {
		likesCount viewerHasLiked commentsCount
		likers(first: 2, after: $likersAfter) { totalCount edges { node { id } } pageInfo { hasNextPage endCursor } }
		comments(first: 2, after: $commentsAfter) { totalCount edges { cursor node { id content author { id } post { id } } } pageInfo { hasNextPage endCursor } }
	} }`
)

func engNewPost(t *testing.T, s *gatewaytest.Server, u gatewaytest.User, input map[string]any) string {
	t.Helper()
	return s.MustDo(t, u.Token, engCreatePostDoc, map[string]any{"i": input}).Str("createPost.id")
}

func TestLikeAndCommentFlow(t *testing.T) {
	s := gatewaytest.New(t)
	author, fan := s.Register(t, "author"), s.Register(t, "fan")
	post := engNewPost(t, s, author, map[string]any{"content": "hello"})

	steps := []struct {
		name       string
		user       gatewaytest.User
		doc        string
		wantLikes  int
		wantLiked  bool
		wantPrefix string
	}{
		{"like", fan, likeDoc, 1, true, "likePost"},
		{"like again", fan, likeDoc, 1, true, "likePost"},
		{"the author likes too", author, likeDoc, 2, true, "likePost"},
		{"unlike", author, unlikeDoc, 1, false, "unlikePost"},
		{"unlike again", author, unlikeDoc, 1, false, "unlikePost"},
	}
	for _, st := range steps {
		r := s.MustDo(t, st.user.Token, st.doc, map[string]any{"p": post})
		if r.Int(st.wantPrefix+".likesCount") != st.wantLikes || r.Get(st.wantPrefix+".viewerHasLiked") != st.wantLiked {
			t.Fatalf("%s: %+v, want likesCount %d viewerHasLiked %v", st.name, r.Data, st.wantLikes, st.wantLiked)
		}
	}

	var comments []string
	for _, c := range []string{"first", "  second  ", "third"} {
		r := s.MustDo(t, fan.Token, addCommentDoc, map[string]any{"p": post, "c": c})
		if r.Str("addComment.content") != strings.TrimSpace(c) || r.Str("addComment.author.id") != fan.ID ||
			r.Str("addComment.post.id") != post || r.Int("addComment.post.commentsCount") != len(comments)+1 {
			t.Fatalf("addComment %q: %+v", c, r.Data)
		}
		comments = append(comments, r.Str("addComment.id"))
	}

	r := s.MustDo(t, "", engPostQuery, map[string]any{"p": post})
	if r.Int("post.likesCount") != 1 || r.Get("post.viewerHasLiked") != false || r.Int("post.commentsCount") != 3 ||
		r.Int("post.likers.totalCount") != 1 || r.Str("post.likers.edges.0.node.id") != fan.ID ||
		r.Int("post.comments.totalCount") != 3 || r.Str("post.comments.edges.0.node.id") != comments[2] ||
		r.Str("post.comments.edges.1.node.content") != "second" || r.Get("post.comments.pageInfo.hasNextPage") != true {
		t.Fatalf("post as seen anonymously: %+v", r.Data)
	}
	next := s.MustDo(t, "", engPostQuery, map[string]any{"p": post, "commentsAfter": r.Str("post.comments.pageInfo.endCursor")})
	if next.Str("post.comments.edges.0.node.id") != comments[0] || next.Get("post.comments.pageInfo.hasNextPage") != false {
		t.Fatalf("second page of comments: %+v", next.Data)
	}

	got := s.MustDo(t, "", `query($id: ID!) { comment(id: $id) { id content author { id } post { id } } }`, map[string]any{"id": comments[1]})
	if got.Str("comment.content") != "second" || got.Str("comment.post.id") != post {
		t.Fatalf("comment(id): %+v", got.Data)
	}
	if id := s.MustDo(t, author.Token, deleteCommentDoc, map[string]any{"id": comments[1]}).Str("deleteComment"); id != comments[1] {
		t.Fatalf("deleteComment returned %q", id)
	}
	gone := s.MustDo(t, "", `query($id: ID!, $p: ID!) { comment(id: $id) { id } post(id: $p) { commentsCount } }`, map[string]any{"id": comments[1], "p": post})
	if gone.Get("comment") != nil || gone.Int("post.commentsCount") != 2 {
		t.Fatalf("after deleteComment: %+v", gone.Data)
	}
}

func TestEngagementErrors(t *testing.T) {
	s := gatewaytest.New(t)
	author, fan, stranger, blocked := s.Register(t, "author"), s.Register(t, "fan"), s.Register(t, "stranger"), s.Register(t, "blocked")
	public := engNewPost(t, s, author, map[string]any{"content": "for all"})
	secret := engNewPost(t, s, author, map[string]any{"content": "for fan", "onlyTo": []string{fan.ID}})
	s.MustDo(t, author.Token, `mutation($u: ID!) { block(userId: $u) { id } }`, map[string]any{"u": blocked.ID})
	comment := s.MustDo(t, fan.Token, addCommentDoc, map[string]any{"p": public, "c": "mine"}).Str("addComment.id")
	secretComment := s.MustDo(t, fan.Token, addCommentDoc, map[string]any{"p": secret, "c": "psst"}).Str("addComment.id")

	tests := []struct {
		name string
		user gatewaytest.User
		doc  string
		vars map[string]any
		code string
	}{
		{"anonymous like", gatewaytest.User{}, likeDoc, map[string]any{"p": public}, "UNAUTHENTICATED"},
		{"anonymous unlike", gatewaytest.User{}, unlikeDoc, map[string]any{"p": public}, "UNAUTHENTICATED"},
		{"anonymous comment", gatewaytest.User{}, addCommentDoc, map[string]any{"p": public, "c": "hi"}, "UNAUTHENTICATED"},
		{"anonymous delete", gatewaytest.User{}, deleteCommentDoc, map[string]any{"id": comment}, "UNAUTHENTICATED"},
		{"like a hidden post", stranger, likeDoc, map[string]any{"p": secret}, "NOT_FOUND"},
		{"unlike a hidden post", stranger, unlikeDoc, map[string]any{"p": secret}, "NOT_FOUND"},
		{"comment on a hidden post", stranger, addCommentDoc, map[string]any{"p": secret, "c": "hi"}, "NOT_FOUND"},
		{"like a missing post", fan, likeDoc, map[string]any{"p": "987654"}, "NOT_FOUND"},
		{"comment on a missing post", fan, addCommentDoc, map[string]any{"p": "987654", "c": "hi"}, "NOT_FOUND"},
		{"like when blocked by the author (hidden: not found)", blocked, likeDoc, map[string]any{"p": public}, "NOT_FOUND"},
		{"comment when blocked by the author (hidden: not found)", blocked, addCommentDoc, map[string]any{"p": public, "c": "hi"}, "NOT_FOUND"},
		{"empty comment", fan, addCommentDoc, map[string]any{"p": public, "c": "  \n "}, "BAD_USER_INPUT"},
		{"too long comment", fan, addCommentDoc, map[string]any{"p": public, "c": strings.Repeat("x", 1001)}, "BAD_USER_INPUT"},
		{"delete someone else's comment", stranger, deleteCommentDoc, map[string]any{"id": comment}, "FORBIDDEN"},
		{"delete a comment on a hidden post", stranger, deleteCommentDoc, map[string]any{"id": secretComment}, "NOT_FOUND"},
		{"delete a missing comment", fan, deleteCommentDoc, map[string]any{"id": "987654"}, "NOT_FOUND"},
		{"malformed comments cursor", fan, `query($p: ID!) { post(id: $p) { comments(after: "nope") { totalCount } } }`, map[string]any{"p": public}, "BAD_USER_INPUT"},
		{"malformed likers cursor", fan, `query($p: ID!) { post(id: $p) { likers(after: "nope") { totalCount } } }`, map[string]any{"p": public}, "BAD_USER_INPUT"},
		{"comments page too large", fan, `query($p: ID!) { post(id: $p) { comments(first: 101) { totalCount } } }`, map[string]any{"p": public}, "BAD_USER_INPUT"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, tt.user.Token, tt.doc, tt.vars)
			if r.Code() != tt.code {
				t.Errorf("code %q (errors %+v), want %q", r.Code(), r.Errors, tt.code)
			}
		})
	}
	// Nothing refused above left a trace.
	r := s.MustDo(t, author.Token, `query($a: ID!, $b: ID!) { a: post(id: $a) { likesCount commentsCount } b: post(id: $b) { likesCount commentsCount } }`,
		map[string]any{"a": public, "b": secret})
	if r.Int("a.likesCount") != 0 || r.Int("a.commentsCount") != 1 || r.Int("b.likesCount") != 0 || r.Int("b.commentsCount") != 1 {
		t.Fatalf("counts after refused mutations: %+v", r.Data)
	}
}

func TestConcurrentLikes(t *testing.T) {
	s := gatewaytest.New(t)
	author := s.Register(t, "author")
	tests := []struct {
		name  string
		users int // distinct users
		times int // likes by each
		want  int
	}{
		{"1000 distinct users at once", 1000, 1, 1000},
		{"one user 50 times at once", 1, 50, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			post := engNewPost(t, s, author, map[string]any{"content": tt.name})
			users := make([]gatewaytest.User, tt.users)
			for i := range users {
				users[i] = s.Register(t, "liker")
			}
			jobs := make(chan gatewaytest.User)
			var wg sync.WaitGroup
			for w := 0; w < 32; w++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for u := range jobs {
						if r := s.Do(t, u.Token, likeDoc, map[string]any{"p": post}); len(r.Errors) > 0 {
							t.Errorf("like: %+v", r.Errors)
						}
					}
				}()
			}
			for _, u := range users {
				for range tt.times {
					jobs <- u
				}
			}
			close(jobs)
			wg.Wait()
			r := s.MustDo(t, "", `query($p: ID!) { post(id: $p) { likesCount likers(first: 1) { totalCount } } }`, map[string]any{"p": post})
			if r.Int("post.likesCount") != tt.want || r.Int("post.likers.totalCount") != tt.want {
				t.Errorf("likes = %+v, want %d", r.Data, tt.want)
			}
		})
	}
}

func TestDeletePostTakesEngagement(t *testing.T) {
	s := gatewaytest.New(t)
	author, fan := s.Register(t, "author"), s.Register(t, "fan")
	post := engNewPost(t, s, author, map[string]any{"content": "soon gone"})
	s.MustDo(t, fan.Token, likeDoc, map[string]any{"p": post})
	comment := s.MustDo(t, fan.Token, addCommentDoc, map[string]any{"p": post, "c": "bye"}).Str("addComment.id")
	s.MustDo(t, author.Token, `mutation($p: ID!) { deletePost(id: $p) }`, map[string]any{"p": post})

	r := s.MustDo(t, fan.Token, `query($p: ID!, $c: ID!) { post(id: $p) { id } comment(id: $c) { id } }`, map[string]any{"p": post, "c": comment})
	if r.Get("post") != nil || r.Get("comment") != nil {
		t.Fatalf("after deletePost: %+v", r.Data)
	}
	for _, tt := range []struct {
		name string
		doc  string
		vars map[string]any
	}{
		{"like", likeDoc, map[string]any{"p": post}},
		{"comment", addCommentDoc, map[string]any{"p": post, "c": "late"}},
		{"delete the comment", deleteCommentDoc, map[string]any{"id": comment}},
	} {
		if code := s.Do(t, fan.Token, tt.doc, tt.vars).Code(); code != "NOT_FOUND" {
			t.Errorf("%s after deletePost: code %q, want NOT_FOUND", tt.name, code)
		}
	}
}
