package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

const (
	idemCreatePost = `mutation($c: String!) { createPost(input: {content: $c}) { id } }`
	idemAddComment = `mutation($p: ID!, $c: String!) { addComment(postId: $p, content: $c) { id } }`
	idemCounts     = `query($u: ID!, $p: ID!) { user(id: $u) { postsCount } post(id: $p) { commentsCount } }`
)

// sendKeyed posts a mutation with an Idempotency-Key header.
func sendKeyed(t *testing.T, s *gatewaytest.Server, token, key, query string, vars map[string]any) *gatewaytest.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/query", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Idempotency-Key", key)
	return gatewaytest.Send(t, req)
}

// retryKeyed sends a keyed mutation until its answer is no CONFLICT (its
// first attempt may still be settling), as a client following
// retryAfter does.
func retryKeyed(t *testing.T, send func() *gatewaytest.Response) *gatewaytest.Response {
	t.Helper()
	var r *gatewaytest.Response
	redistest.Eventually(t, 10*time.Second, "an answer other than CONFLICT", func() bool {
		r = send()
		return r.Code() != string(social.Conflict)
	})
	return r
}

// counts reads u's post count and p's comment count.
func counts(t *testing.T, s *gatewaytest.Server, u gatewaytest.User, post string) (posts, comments int) {
	t.Helper()
	r := s.MustDo(t, u.Token, idemCounts, map[string]any{"u": u.ID, "p": post})
	return r.Int("user.postsCount"), r.Int("post.commentsCount")
}

// killedAfterWrite sends a keyed mutation over a raw connection and
// resets the connection, unread, once the server has written what the
// mutation writes (done says so).
func killedAfterWrite(t *testing.T, s *gatewaytest.Server, token, key, query string, vars map[string]any, done func() bool) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(s.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := json.Marshal(map[string]any{"query": query, "variables": vars})
	fmt.Fprintf(conn, "POST /query HTTP/1.1\r\nHost: gw\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\n"+
		"Idempotency-Key: %q\r\nContent-Length: %d\r\n\r\n%s", token, key, len(body), body)
	redistest.Eventually(t, 10*time.Second, "the first attempt's write", done)
	_ = conn.(*net.TCPConn).SetLinger(0) // reset: the answer is never read
	_ = conn.Close()
}

// TestIdempotentRetryOverHTTP: a post and a comment whose connections
// are killed once the server has written them, retried with the same
// keys, exist once each, and the retries get the first answers.
func TestIdempotentRetryOverHTTP(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "idem")
	killedAfterWrite(t, s, u.Token, "post-1", idemCreatePost, map[string]any{"c": "hello"}, func() bool {
		n, _ := counts(t, s, u, "0")
		return n == 1
	})
	r := retryKeyed(t, func() *gatewaytest.Response {
		return sendKeyed(t, s, u.Token, "post-1", idemCreatePost, map[string]any{"c": "hello"})
	})
	post := r.Str("createPost.id")
	if post == "" || len(r.Errors) > 0 {
		t.Fatalf("retried createPost: %+v", r)
	}
	vars := map[string]any{"p": post, "c": "nice"}
	killedAfterWrite(t, s, u.Token, "comment-1", idemAddComment, vars, func() bool {
		_, n := counts(t, s, u, post)
		return n == 1
	})
	r = retryKeyed(t, func() *gatewaytest.Response {
		return sendKeyed(t, s, u.Token, "comment-1", idemAddComment, vars)
	})
	if r.Str("addComment.id") == "" {
		t.Fatalf("retried addComment: %+v", r)
	}
	if posts, comments := counts(t, s, u, post); posts != 1 || comments != 1 {
		t.Fatalf("after retries: %d posts, %d comments; want 1 and 1", posts, comments)
	}
	again := sendKeyed(t, s, u.Token, "post-1", idemCreatePost, map[string]any{"c": "hello"})
	if again.Str("createPost.id") != post {
		t.Fatalf("repeat got post %q, want the first answer's %q", again.Str("createPost.id"), post)
	}
}

// TestIdempotencyKeyRefusals: what a key may not be used for.
func TestIdempotencyKeyRefusals(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "idemr")
	if r := sendKeyed(t, s, u.Token, "k1", idemCreatePost, map[string]any{"c": "one"}); len(r.Errors) > 0 {
		t.Fatalf("first use: %+v", r)
	}
	login := `mutation($i: LoginInput!) { login(input: $i) { accessToken } }`
	cases := []struct {
		name, token, key, query string
		vars                    map[string]any
		want                    string
	}{
		{"same key, other variables", u.Token, "k1", idemCreatePost, map[string]any{"c": "two"}, string(social.BadUserInput)},
		{"anonymous mutation", "", "k2", login, map[string]any{"i": map[string]any{"login": u.Name, "password": gatewaytest.Password}}, string(social.BadUserInput)},
		{"malformed key", u.Token, "a b", idemCreatePost, map[string]any{"c": "three"}, string(social.BadUserInput)},
		{"overlong key", u.Token, strings.Repeat("k", 256), idemCreatePost, map[string]any{"c": "four"}, string(social.BadUserInput)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sendKeyed(t, s, tc.token, tc.key, tc.query, tc.vars).WantCode(t, tc.want)
		})
	}
	if posts, _ := counts(t, s, u, "0"); posts != 1 {
		t.Fatalf("%d posts, want 1", posts)
	}
}

// TestIdempotentRetryOverWebsocket: a post sent over graphql-transport-ws
// with extensions.idempotencyKey, whose socket dies once the server has
// written it, retried on a new socket, exists once.
func TestIdempotentRetryOverWebsocket(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "idemws")
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	open := func() *websocket.Conn {
		c, _, err := websocket.Dial(ctx, s.WSURL(), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			t.Fatal(err)
		}
		gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{Type: "connection_init", Payload: json.RawMessage(`{"Authorization":"Bearer ` + u.Token + `"}`)})
		if m, err := gatewaytest.WSNext(ctx, c); err != nil || m.Type != "connection_ack" {
			t.Fatalf("init: %+v %v", m, err)
		}
		return c
	}
	payload := json.RawMessage(`{"query":` + gatewaytest.Quote(idemCreatePost) + `,"variables":{"c":"over ws"},"extensions":{"idempotencyKey":"ws-1"}}`)
	first := open()
	gatewaytest.WSSend(ctx, t, first, gatewaytest.WSMessage{ID: "1", Type: "subscribe", Payload: payload})
	redistest.Eventually(t, 10*time.Second, "the first attempt's write", func() bool {
		n, _ := counts(t, s, u, "0")
		return n == 1
	})
	first.CloseNow()
	var post string
	redistest.Eventually(t, 10*time.Second, "an answer other than CONFLICT", func() bool {
		c := open()
		defer c.CloseNow()
		gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{ID: "2", Type: "subscribe", Payload: payload})
		m, err := gatewaytest.WSNext(ctx, c)
		if err != nil || m.Type != "next" {
			t.Fatalf("retry: %+v %v", m, err)
		}
		r := gatewaytest.Decode(t, 200, m.Payload)
		post = r.Str("createPost.id")
		return r.Code() != string(social.Conflict)
	})
	if posts, _ := counts(t, s, u, post); posts != 1 || post == "" {
		t.Fatalf("after the retry: %d posts (answer's post %q); want 1", posts, post)
	}
}
