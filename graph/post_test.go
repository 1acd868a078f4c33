package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redisstore"
)

const (
	feedCreateDoc = `mutation($i: CreatePostInput!) { createPost(input: $i) {
		id content createdAt visibility author { id postsCount } onlyTo { id } notTo { id } repostOf { id } repostsCount } }`
	feedDeleteDoc = `mutation($id: ID!) { deletePost(id: $id) }`
	feedPostDoc   = `query($id: ID!) { post(id: $id) { id content visibility onlyTo { id } notTo { id } repostOf { id } repostsCount } }`
	feedHomeDoc   = `query($first: Int, $after: String) { timeline(first: $first, after: $after) {
		edges { cursor node { id author { id } repostOf { id } } } pageInfo { hasNextPage endCursor } } }`
	feedUserDoc = `query($u: ID!, $first: Int, $after: String) { userTimeline(userId: $u, first: $first, after: $after) {
		edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }`
	feedUserPostsDoc = `query($u: ID!, $first: Int, $after: String) { user(id: $u) { postsCount posts(first: $first, after: $after) {
		edges { cursor node { id } } pageInfo { hasNextPage endCursor } } } }`
)

// feedServer is a test server in a fan-out mode, with a worker that tests
// run with drain.
type feedServer struct {
	*gatewaytest.Server
	w *gatewaytest.Fanout
}

func newFeedServer(t *testing.T, mode redisstore.FeedMode, tune ...func(*redisstore.FeedConfig)) *feedServer {
	t.Helper()
	return newFeedServerWith(t, gatewaytest.Options{}, mode, tune...)
}

// newFeedServerWith is newFeedServer with other options besides the feed's.
func newFeedServerWith(t *testing.T, o gatewaytest.Options, mode redisstore.FeedMode, tune ...func(*redisstore.FeedConfig)) *feedServer {
	t.Helper()
	cfg := redisstore.DefaultFeed()
	cfg.Mode = mode
	for _, f := range tune {
		f(&cfg)
	}
	o.Feed = &cfg
	s := gatewaytest.New(t, o)
	return &feedServer{Server: s, w: gatewaytest.NewFanout(t, s)}
}

// drain waits for every queued fan-out job to be done.
func (s *feedServer) drain(t *testing.T) {
	t.Helper()
	s.w.Drain(t)
}

func (s *feedServer) post(t *testing.T, u gatewaytest.User, input map[string]any) string {
	t.Helper()
	if input["content"] == nil {
		input["content"] = "hello"
	}
	return s.MustDo(t, u.Token, feedCreateDoc, map[string]any{"i": input}).Str("createPost.id")
}

// pages reads a whole connection through GraphQL, first posts a page, and
// checks pages are full and posts do not repeat. at is the path of the
// connection in the response.
func (s *feedServer) pages(t *testing.T, token, doc, at string, vars map[string]any, first int) []string {
	t.Helper()
	var got []string
	seen := map[string]bool{}
	var after any
	for n := 0; n < 500; n++ {
		v := map[string]any{"first": first, "after": after}
		for k, x := range vars {
			v[k] = x
		}
		r := s.MustDo(t, token, doc, v)
		edges, _ := r.Get(at + ".edges").([]any)
		for i := range edges {
			id := r.Str(fmt.Sprintf("%s.edges.%d.node.id", at, i))
			if seen[id] {
				t.Fatalf("post %s repeats on page %d", id, n)
			}
			seen[id] = true
			got = append(got, id)
		}
		if r.Get(at+".pageInfo.hasNextPage") != true {
			return got
		}
		if len(edges) != first {
			t.Fatalf("page %d has %d posts, want %d", n, len(edges), first)
		}
		after = r.Str(at + ".pageInfo.endCursor")
	}
	t.Fatal("too many pages")
	return nil
}

func TestCreatePostErrors(t *testing.T) {
	s := newFeedServer(t, redisstore.Hybrid)
	author, other, blocker := s.Register(t, "author"), s.Register(t, "other"), s.Register(t, "blocker")
	hidden := s.post(t, other, map[string]any{"onlyTo": []string{blocker.ID}})
	theirs := s.post(t, blocker, map[string]any{})
	s.MustDo(t, blocker.Token, `mutation($u: ID!) { block(userId: $u) { id } }`, map[string]any{"u": author.ID})
	many := make([]string, 1001)
	for i := range many {
		many[i] = other.ID
	}
	tests := []struct {
		name  string
		token string
		input map[string]any
		code  string
	}{
		{"anonymous", "", map[string]any{"content": "x"}, "UNAUTHENTICATED"},
		{"empty", author.Token, map[string]any{"content": ""}, "BAD_USER_INPUT"},
		{"blank", author.Token, map[string]any{"content": "   "}, "BAD_USER_INPUT"},
		{"501 characters", author.Token, map[string]any{"content": strings.Repeat("ü", 501)}, "BAD_USER_INPUT"},
		{"onlyTo with notTo", author.Token, map[string]any{"content": "x", "onlyTo": []string{other.ID}, "notTo": []string{other.ID}}, "BAD_USER_INPUT"},
		{"unknown audience", author.Token, map[string]any{"content": "x", "notTo": []string{"987654"}}, "BAD_USER_INPUT"},
		{"1001 ids", author.Token, map[string]any{"content": "x", "onlyTo": many}, "BAD_USER_INPUT"},
		{"repost of unknown", author.Token, map[string]any{"content": "x", "repostOf": "987654"}, "NOT_FOUND"},
		{"repost of hidden", author.Token, map[string]any{"content": "x", "repostOf": hidden}, "NOT_FOUND"},
		{"repost of a blocker's post", author.Token, map[string]any{"content": "x", "repostOf": theirs}, "NOT_FOUND"},
		{"ok: 500 characters", author.Token, map[string]any{"content": strings.Repeat("ü", 500)}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, tt.token, feedCreateDoc, map[string]any{"i": tt.input})
			if r.Code() != tt.code {
				t.Fatalf("code %q (%+v), want %q", r.Code(), r.Errors, tt.code)
			}
		})
	}
}

func TestPostFieldsAudienceAndReposts(t *testing.T) {
	s := newFeedServer(t, redisstore.Hybrid)
	author, friend, stranger := s.Register(t, "author"), s.Register(t, "friend"), s.Register(t, "stranger")
	r := s.MustDo(t, author.Token, feedCreateDoc, map[string]any{"i": map[string]any{"content": "  for friends  ", "onlyTo": []string{friend.ID}}})
	only := r.Str("createPost.id")
	if r.Str("createPost.content") != "for friends" || r.Str("createPost.visibility") != "ONLY_TO" ||
		r.Str("createPost.onlyTo.0.id") != friend.ID || r.Int("createPost.author.postsCount") != 1 || r.Get("createPost.notTo") != nil {
		t.Fatalf("createPost: %+v", r.Data)
	}
	if _, err := time.Parse(time.RFC3339Nano, r.Str("createPost.createdAt")); err != nil {
		t.Fatalf("createdAt: %v", err)
	}
	public := s.post(t, author, map[string]any{"content": "public"})
	repost := s.MustDo(t, friend.Token, feedCreateDoc, map[string]any{"i": map[string]any{"content": "look", "repostOf": public}})
	if repost.Str("createPost.repostOf.id") != public {
		t.Fatalf("repost: %+v", repost.Data)
	}
	tests := []struct {
		name  string
		token string
		id    string
		want  string // fmt of the post, "<nil>" when hidden
	}{
		{"author sees audience", author.Token, only, "map[content:for friends id:" + only + " notTo:<nil> onlyTo:[map[id:" + friend.ID + "]] repostOf:<nil> repostsCount:0 visibility:ONLY_TO]"},
		{"member does not see the list", friend.Token, only, "map[content:for friends id:" + only + " notTo:<nil> onlyTo:<nil> repostOf:<nil> repostsCount:0 visibility:ONLY_TO]"},
		{"stranger sees nothing", stranger.Token, only, "<nil>"},
		{"anonymous sees nothing", "", only, "<nil>"},
		{"reposts counted", stranger.Token, public, "map[content:public id:" + public + " notTo:<nil> onlyTo:<nil> repostOf:<nil> repostsCount:1 visibility:PUBLIC]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := fmt.Sprint(s.MustDo(t, tt.token, feedPostDoc, map[string]any{"id": tt.id}).Get("post"))
			if got != tt.want {
				t.Fatalf("post = %s\nwant   %s", got, tt.want)
			}
		})
	}
}

// Plain reposts through the API: content left out, one per user and post,
// viewerHasReposted, undone with deletePost; a repost takes its original's
// audience; location and source are kept as given.
func TestPlainRepostsAndPostExtras(t *testing.T) {
	s := newFeedServer(t, redisstore.Push)
	author, fan, friend := s.Register(t, "author"), s.Register(t, "fan"), s.Register(t, "friend")
	const doc = `mutation($i: CreatePostInput!) { createPost(input: $i) {
		id content visibility source location { latitude longitude name } repostOf { id repostsCount viewerHasReposted } } }`
	const read = `query($id: ID!) { post(id: $id) { repostsCount viewerHasReposted } }`
	orig := s.MustDo(t, author.Token, doc, map[string]any{"i": map[string]any{
		"content": "from the park", "source": "web", "location": map[string]any{"latitude": 52.52, "longitude": 13.405, "name": "Tiergarten"}}})
	id := orig.Str("createPost.id")
	if got := fmt.Sprintf("%v %v", orig.Get("createPost.location"), orig.Get("createPost.source")); got != "map[latitude:52.52 longitude:13.405 name:Tiergarten] web" {
		t.Fatalf("location and source: %s", got)
	}
	first := s.MustDo(t, fan.Token, doc, map[string]any{"i": map[string]any{"repostOf": id}})
	again := s.MustDo(t, fan.Token, doc, map[string]any{"i": map[string]any{"repostOf": id, "content": ""}})
	if first.Str("createPost.id") != again.Str("createPost.id") || first.Str("createPost.content") != "" ||
		fmt.Sprint(again.Get("createPost.repostOf")) != "map[id:"+id+" repostsCount:1 viewerHasReposted:true]" ||
		first.Get("createPost.source") != nil || first.Get("createPost.location") != nil {
		t.Fatalf("plain reposts: %+v then %+v", first.Data, again.Data)
	}
	if got := fmt.Sprint(s.MustDo(t, friend.Token, read, map[string]any{"id": id}).Get("post")); got != "map[repostsCount:1 viewerHasReposted:false]" {
		t.Fatalf("as another user: %s", got)
	}
	s.MustDo(t, fan.Token, feedDeleteDoc, map[string]any{"id": first.Str("createPost.id")})
	if got := fmt.Sprint(s.MustDo(t, fan.Token, read, map[string]any{"id": id}).Get("post")); got != "map[repostsCount:0 viewerHasReposted:false]" {
		t.Fatalf("after deleting the repost: %s", got)
	}

	only := s.post(t, author, map[string]any{"content": "for a friend", "onlyTo": []string{friend.ID}})
	r := s.MustDo(t, friend.Token, doc, map[string]any{"i": map[string]any{"content": "see this", "repostOf": only}})
	if r.Str("createPost.visibility") != "ONLY_TO" {
		t.Fatalf("repost of an ONLY_TO post: %+v", r.Data)
	}
	if got := s.MustDo(t, fan.Token, read, map[string]any{"id": r.Str("createPost.id")}).Get("post"); got != nil {
		t.Fatalf("the repost shows to someone its original is hidden from: %v", got)
	}
	for name, in := range map[string]map[string]any{
		"no content":         {},
		"audience on repost": {"repostOf": id, "onlyTo": []string{fan.ID}},
		"latitude":           {"content": "x", "location": map[string]any{"latitude": 91, "longitude": 0}},
		"source too long":    {"content": "x", "source": strings.Repeat("s", 41)},
	} {
		if c := s.Do(t, fan.Token, doc, map[string]any{"i": in}).Code(); c != "BAD_USER_INPUT" {
			t.Errorf("%s: code %q, want BAD_USER_INPUT", name, c)
		}
	}
}

func TestDeletePost(t *testing.T) {
	s := newFeedServer(t, redisstore.Push)
	author, fan, stranger := s.Register(t, "author"), s.Register(t, "fan"), s.Register(t, "stranger")
	s.MustDo(t, fan.Token, `mutation($u: ID!) { follow(userId: $u) { id } }`, map[string]any{"u": author.ID})
	post := s.post(t, author, map[string]any{"content": "soon gone"})
	hidden := s.post(t, author, map[string]any{"notTo": []string{stranger.ID}})
	repost := s.post(t, fan, map[string]any{"repostOf": post})
	ownRepost := s.post(t, author, map[string]any{"repostOf": repost})
	s.drain(t)
	tests := []struct {
		name  string
		token string
		id    string
		code  string
	}{
		{"anonymous", "", post, "UNAUTHENTICATED"},
		{"not the author", fan.Token, post, "FORBIDDEN"},
		{"hidden from the viewer", stranger.Token, hidden, "NOT_FOUND"},
		{"unknown", author.Token, "987654", "NOT_FOUND"},
		{"malformed", author.Token, "p-1", "NOT_FOUND"},
		{"the author", author.Token, post, ""},
		{"twice", author.Token, post, "NOT_FOUND"},
		{"a repost", author.Token, ownRepost, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, tt.token, feedDeleteDoc, map[string]any{"id": tt.id})
			if r.Code() != tt.code {
				t.Fatalf("code %q (%+v), want %q", r.Code(), r.Errors, tt.code)
			}
			if tt.code == "" && r.Str("deletePost") != tt.id {
				t.Fatalf("deletePost = %+v", r.Data)
			}
		})
	}
	// Gone at once, before any fan-out: post(id), the timelines, repostOf.
	for _, u := range []gatewaytest.User{author, fan} {
		if got := s.MustDo(t, u.Token, feedPostDoc, map[string]any{"id": post}).Get("post"); got != nil {
			t.Fatalf("post(id) after delete: %v", got)
		}
		home := s.pages(t, u.Token, feedHomeDoc, "timeline", nil, 10)
		if strings.Contains(fmt.Sprint(home), post) || strings.Contains(fmt.Sprint(home), ownRepost) {
			t.Fatalf("timeline of %s still shows a deleted post: %v", u.Name, home)
		}
	}
	r := s.MustDo(t, fan.Token, feedPostDoc, map[string]any{"id": repost})
	if r.Str("post.id") != repost || r.Get("post.repostOf") != nil || r.Int("post.repostsCount") != 0 {
		t.Fatalf("the repost after its original and its own repost went: %+v", r.Data)
	}
	// After fan-out: nothing left in Redis of the deleted posts.
	s.drain(t)
	ctx := context.Background()
	k := s.Store.Keys()
	for _, key := range []string{k.Post(post), k.PostReposts(post), k.PostReposts(repost), k.Likers(post), k.PostComments(post)} {
		if n := s.Redis.Exists(ctx, key).Val(); n != 0 {
			t.Errorf("%s still exists", key)
		}
	}
	list := s.Redis.LRange(ctx, k.Home(fan.ID), 0, -1).Val()
	if strings.Contains(fmt.Sprint(list), post+":") {
		t.Errorf("fan's home list still holds the deleted post: %v", list)
	}
	if n := s.MustDo(t, author.Token, feedUserPostsDoc, map[string]any{"u": author.ID}).Int("user.postsCount"); n != 1 {
		t.Errorf("postsCount = %d, want 1", n)
	}
}

// TestEscapedTextKept: text written as JSON escapes — a surrogate pair, an
// escaped backslash before "ud800" — is stored as the characters it
// escapes (only a lone half of a pair is refused: TestBadInput).
func TestEscapedTextKept(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "escaper")
	for _, tt := range []struct{ escaped, want string }{
		{`\ud83d\ude00 smile`, "😀 smile"},
		{`a\\ud800b`, `a\ud800b`},
		{`caf\u00e9`, "café"},
	} {
		body := `{"query":"mutation($i: CreatePostInput!) { createPost(input: $i) { content } }","variables":{"i":{"content":"` + tt.escaped + `"}}}`
		st, _, b := httpDo(t, s, "POST", "/query", map[string]string{"Content-Type": jsonType, "Authorization": "Bearer " + u.Token},
			strings.NewReader(body))
		var r struct {
			Data struct {
				CreatePost struct{ Content string } `json:"createPost"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &r); err != nil || st != 200 || r.Data.CreatePost.Content != tt.want {
			t.Errorf("%s: %d %s; want content %q", tt.escaped, st, b, tt.want)
		}
	}
}
