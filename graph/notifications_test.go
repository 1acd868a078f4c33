package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/socialgw/gateway/internal/redisstore"
)

const notificationsDoc = `query($first: Int, $after: String) { notifications(first: $first, after: $after) {
	unreadCount pageInfo { hasNextPage endCursor }
	edges { cursor node { id kind actorsCount read updatedAt actors(first: 1) { name } more: actors { name } post { id } comment { content } } } } }`

// TestNotificationsAPI reads notifications through GraphQL: each kind,
// aggregated likes with their actors, the post and comment they are
// about, Post.mentions, read marks, and the errors.
func TestNotificationsAPI(t *testing.T) {
	s := newFeedServer(t, redisstore.Push)
	owner, fan, other := s.Register(t, "owner"), s.Register(t, "fan"), s.Register(t, "other")
	post := s.post(t, owner, map[string]any{"content": "hello"})
	like := `mutation($p: ID!) { likePost(postId: $p) { id } }`
	s.MustDo(t, fan.Token, like, map[string]any{"p": post})
	s.MustDo(t, other.Token, like, map[string]any{"p": post})
	s.MustDo(t, fan.Token, `mutation($p: ID!, $c: String!) { addComment(postId: $p, content: $c) { id } }`, map[string]any{"p": post, "c": "hi @" + owner.Name})
	s.MustDo(t, fan.Token, `mutation($u: ID!) { follow(userId: $u) { id } }`, map[string]any{"u": owner.ID})
	mention := s.post(t, other, map[string]any{"content": "look @" + strings.ToUpper(owner.Name) + " and @nobody_here"})
	s.drain(t)

	r := s.MustDo(t, owner.Token, notificationsDoc, map[string]any{"first": 10})
	if r.Int("notifications.unreadCount") != 5 || r.Get("notifications.pageInfo.hasNextPage") != false {
		t.Fatalf("notifications: %+v", r.Data)
	}
	byKind := map[string]string{}
	var ids []string
	for i := range 5 {
		n := fmt.Sprintf("notifications.edges.%d.node.", i)
		byKind[r.Str(n+"kind")] = fmt.Sprintf("%v %v %v %v %v %v", r.Get(n+"actorsCount"), r.Get(n+"actors"), r.Get(n+"more"),
			r.Get(n+"post"), r.Get(n+"comment"), r.Get(n+"read"))
		ids = append(ids, r.Str(n+"id"))
		if _, err := time.Parse(time.RFC3339Nano, r.Str(n+"updatedAt")); err != nil {
			t.Errorf("updatedAt: %v", err)
		}
	}
	f, o := fan.Name, other.Name
	want := map[string]string{
		"LIKE":    fmt.Sprintf("2 [map[name:%s]] [map[name:%s] map[name:%s]] map[id:%s] <nil> false", o, o, f, post),
		"COMMENT": fmt.Sprintf("1 [map[name:%s]] [map[name:%s]] map[id:%s] map[content:hi @%s] false", f, f, post, owner.Name),
		"FOLLOW":  fmt.Sprintf("1 [map[name:%s]] [map[name:%s]] <nil> <nil> false", f, f),
	}
	for k, w := range want {
		if byKind[k] != w {
			t.Errorf("%s: %s\n want %s", k, byKind[k], w)
		}
	}
	if !slices.IsSortedFunc(ids, func(a, b string) int { return atoiT(t, b) - atoiT(t, a) }) {
		t.Errorf("not most recent first: %v", ids)
	}
	// Two mentions: in the other's post, and in the fan's comment (its
	// comment field set); the order of jobs run together is the workers'.
	var mentions []string
	for i := range 5 {
		n := fmt.Sprintf("notifications.edges.%d.node.", i)
		if r.Str(n+"kind") == "MENTION" {
			mentions = append(mentions, fmt.Sprint(r.Get(n+"actors"), r.Get(n+"post"), r.Get(n+"comment")))
		}
	}
	slices.Sort(mentions)
	if want := []string{
		fmt.Sprintf("[map[name:%s]] map[id:%s] map[content:hi @%s]", f, post, owner.Name),
		fmt.Sprintf("[map[name:%s]] map[id:%s] <nil>", o, mention),
	}; !slices.Equal(mentions, want) {
		t.Errorf("mentions: %q\n want %q", mentions, want)
	}

	if got := fmt.Sprint(s.MustDo(t, owner.Token, `query($p: ID!) { post(id: $p) { mentions { name } } }`, map[string]any{"p": mention}).Get("post.mentions")); got != "[map[name:"+owner.Name+"]]" {
		t.Errorf("mentions: %s", got)
	}
	page := s.MustDo(t, owner.Token, notificationsDoc, map[string]any{"first": 2})
	next := s.MustDo(t, owner.Token, notificationsDoc, map[string]any{"first": 10, "after": page.Str("notifications.pageInfo.endCursor")})
	if page.Get("notifications.pageInfo.hasNextPage") != true || next.Str("notifications.edges.0.node.id") != ids[2] {
		t.Errorf("pages: %+v then %+v", page.Data, next.Data)
	}
	mark := `mutation($u: ID) { markNotificationsRead(upTo: $u) }`
	for _, tc := range []struct {
		upTo any
		want int
	}{{ids[3], 3}, {ids[4], 3}, {nil, 0}, {ids[0], 0}} {
		if n := s.MustDo(t, owner.Token, mark, map[string]any{"u": tc.upTo}).Int("markNotificationsRead"); n != tc.want {
			t.Errorf("mark read up to %v: %d unread, want %d", tc.upTo, n, tc.want)
		}
	}
	for name, c := range map[string]struct {
		token, doc string
		vars       map[string]any
		code       string
	}{
		"anonymous":       {"", notificationsDoc, nil, "UNAUTHENTICATED"},
		"anonymous mark":  {"", mark, map[string]any{"u": nil}, "UNAUTHENTICATED"},
		"bad first":       {owner.Token, notificationsDoc, map[string]any{"first": 0}, "BAD_USER_INPUT"},
		"bad cursor":      {owner.Token, notificationsDoc, map[string]any{"after": "nope"}, "BAD_USER_INPUT"},
		"bad actor count": {owner.Token, `{ notifications { edges { node { actors(first: 0) { id } } } } }`, nil, "BAD_USER_INPUT"},
		"malformed upTo":  {owner.Token, mark, map[string]any{"u": "x"}, "NOT_FOUND"},
	} {
		if got := s.Do(t, c.token, c.doc, c.vars).Code(); got != c.code {
			t.Errorf("%s: code %q, want %q", name, got, c.code)
		}
	}
}

func atoiT(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return n
}

// TestNotificationAddedLive subscribes over the websocket: a new like
// arrives, a second one arrives again as the grown notification, and a
// resume with since replays what was raised after it, in order.
func TestNotificationAddedLive(t *testing.T) {
	s := newFeedServer(t, redisstore.Push)
	owner, a, b := s.Register(t, "owner"), s.Register(t, "a"), s.Register(t, "b")
	post := s.post(t, owner, map[string]any{"content": "hello"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	subscribe := func(since string) *websocket.Conn {
		c, _, err := websocket.Dial(ctx, wsURL(s.Server), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.CloseNow() })
		wsSend(ctx, t, c, wsMessage{Type: "connection_init", Payload: json.RawMessage(`{"Authorization": "Bearer ` + owner.Token + `"}`)})
		if m, err := wsNext(ctx, c); err != nil || m.Type != "connection_ack" {
			t.Fatalf("connection_init: %+v, %v", m, err)
		}
		vars := map[string]any{}
		if since != "" {
			vars["since"] = since
		}
		q, _ := json.Marshal(map[string]any{"query": `subscription($since: ID) { notificationAdded(since: $since) { id kind actorsCount actors { name } } }`, "variables": vars})
		wsSend(ctx, t, c, wsMessage{ID: "1", Type: "subscribe", Payload: q})
		waitSubscribers(t, s.Hub, 1)
		waitChannel(ctx, t, s.Server, s.Store.NoteChannel(owner.ID))
		return c
	}
	next := func(c *websocket.Conn) (string, string) {
		t.Helper()
		m, err := wsNext(ctx, c)
		if err != nil || m.Type != "next" {
			t.Fatalf("next: %+v, %v", m, err)
		}
		var p struct {
			Data struct {
				NotificationAdded struct {
					ID          string
					Kind        string
					ActorsCount int
					Actors      []struct{ Name string }
				}
			}
		}
		if err := json.Unmarshal(m.Payload, &p); err != nil {
			t.Fatal(err)
		}
		n := p.Data.NotificationAdded
		return n.ID, fmt.Sprintf("%s %d %v", n.Kind, n.ActorsCount, n.Actors)
	}
	like := `mutation($p: ID!) { likePost(postId: $p) { id } }`

	c := subscribe("")
	s.MustDo(t, a.Token, like, map[string]any{"p": post})
	s.drain(t)
	first, got := next(c)
	if got != "LIKE 1 [{"+a.Name+"}]" {
		t.Fatalf("first: %s", got)
	}
	s.MustDo(t, b.Token, like, map[string]any{"p": post})
	s.drain(t)
	if id, got := next(c); got != "LIKE 2 [{"+b.Name+"} {"+a.Name+"}]" || atoiT(t, id) <= atoiT(t, first) {
		t.Fatalf("grown: %s %s", id, got)
	}
	c.Close(websocket.StatusNormalClosure, "")
	waitSubscribers(t, s.Hub, 0)

	// Away: a follow and a comment; back with since the first like.
	s.MustDo(t, a.Token, `mutation($u: ID!) { follow(userId: $u) { id } }`, map[string]any{"u": owner.ID})
	s.drain(t)
	s.MustDo(t, b.Token, `mutation($p: ID!) { addComment(postId: $p, content: "hey") { id } }`, map[string]any{"p": post})
	s.drain(t)
	c = subscribe(first)
	var kinds []string
	for range 3 {
		_, got := next(c)
		kinds = append(kinds, got)
	}
	if want := []string{"LIKE 2 [{" + b.Name + "} {" + a.Name + "}]", "FOLLOW 1 [{" + a.Name + "}]", "COMMENT 1 [{" + b.Name + "}]"}; !slices.Equal(kinds, want) {
		t.Fatalf("resumed: %v, want %v", kinds, want)
	}

	// A notification raised only by an account suspended meanwhile is
	// left out, as a page of notifications leaves it out.
	m := s.Register(t, "m")
	other := s.post(t, owner, map[string]any{"content": "another"})
	s.MustDo(t, m.Token, `mutation($p: ID!) { addComment(postId: $p, content: "spam") { id } }`, map[string]any{"p": other})
	if err := s.Store.SetSuspended(ctx, m.ID, true); err != nil {
		t.Fatal(err)
	}
	s.drain(t)
	s.MustDo(t, b.Token, like, map[string]any{"p": other})
	s.drain(t)
	if _, got := next(c); got != "LIKE 1 [{"+b.Name+"}]" {
		t.Fatalf("after a suspended account's comment: %s, want b's like", got)
	}
}
