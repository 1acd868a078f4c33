package redisstore_test

import (
	"context"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// feedStore returns a store over its own key prefix of the package's Redis,
// configured with cfg when given.
func feedStore(tb testing.TB, cfg ...redisstore.FeedConfig) (*redisstore.Store, redis.UniversalClient) {
	tb.Helper()
	rdb := redistest.Client(tb)
	s := redisstore.New(rdb, redistest.Prefix(tb))
	for _, c := range cfg {
		if err := s.SetFeed(c); err != nil {
			tb.Fatal(err)
		}
	}
	return s, rdb
}

// feedUsers creates n users and returns their ids.
func feedUsers(tb testing.TB, s *redisstore.Store, n int) []string {
	tb.Helper()
	ids := make([]string, n)
	for i := range ids {
		name := fmt.Sprintf("u%d_%s", i, strings.ReplaceAll(tb.Name(), "/", "_"))
		if len(name) > 60 {
			name = name[:60]
		}
		u, err := s.CreateUser(context.Background(), social.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: "x"})
		if err != nil {
			tb.Fatalf("create user: %v", err)
		}
		ids[i] = u.ID
	}
	return ids
}

// feedPost creates a post and fails the test on error.
func feedPost(tb testing.TB, s *redisstore.Store, author string, in social.NewPost) *social.Post {
	tb.Helper()
	if in.Content == "" {
		in.Content = "hello"
	}
	p, err := s.CreatePost(context.Background(), author, in)
	if err != nil {
		tb.Fatalf("create post by %s: %v", author, err)
	}
	return p
}

func atoi(tb testing.TB, s string) int {
	tb.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		tb.Fatal(err)
	}
	return n
}

func feedOK(tb testing.TB, err error) {
	tb.Helper()
	if err != nil {
		tb.Fatal(err)
	}
}

func TestCreatePostValidation(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 4)
	author, other, blocker, hidden := u[0], u[1], u[2], u[3]
	secret := feedPost(t, s, other, social.NewPost{OnlyTo: []string{hidden}})
	theirs := feedPost(t, s, blocker, social.NewPost{})
	feedOK(t, s.Block(ctx, blocker, author))
	many := make([]string, 1001)
	for i := range many {
		many[i] = other
	}

	tests := []struct {
		name string
		in   social.NewPost
		code social.Code
	}{
		{"empty", social.NewPost{Content: ""}, social.BadUserInput},
		{"blank", social.NewPost{Content: " \n\t "}, social.BadUserInput},
		{"too long", social.NewPost{Content: strings.Repeat("a", 501)}, social.BadUserInput},
		{"500 code points", social.NewPost{Content: strings.Repeat("é", 500)}, ""},
		{"500 after trimming", social.NewPost{Content: "  " + strings.Repeat("x", 500) + "  "}, ""},
		{"invalid utf-8", social.NewPost{Content: "a\xffb"}, social.BadUserInput},
		{"onlyTo and notTo", social.NewPost{Content: "x", OnlyTo: []string{other}, NotTo: []string{other}}, social.BadUserInput},
		{"empty onlyTo", social.NewPost{Content: "x", OnlyTo: []string{}}, social.BadUserInput},
		{"empty notTo", social.NewPost{Content: "x", NotTo: []string{}}, ""},
		{"unknown onlyTo", social.NewPost{Content: "x", OnlyTo: []string{other, "999999"}}, social.BadUserInput},
		{"malformed notTo", social.NewPost{Content: "x", NotTo: []string{"a}b"}}, social.BadUserInput},
		{"1001 ids", social.NewPost{Content: "x", NotTo: many}, social.BadUserInput},
		{"1000 ids", social.NewPost{Content: "x", NotTo: many[:1000]}, ""},
		{"repost of unknown", social.NewPost{Content: "x", RepostOf: "999999"}, social.NotFound},
		{"repost of malformed", social.NewPost{Content: "x", RepostOf: "p1"}, social.NotFound},
		{"repost of hidden", social.NewPost{Content: "x", RepostOf: secret.ID}, social.NotFound},
		{"repost by blocked user (hidden: not found)", social.NewPost{Content: "x", RepostOf: theirs.ID}, social.NotFound},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := s.CreatePost(ctx, author, tc.in)
			if got := social.ErrorCode(err); got != tc.code {
				t.Fatalf("code = %q (%v), want %q", got, err, tc.code)
			}
			if tc.code == "" && (p.ID == "" || p.Content != strings.TrimSpace(tc.in.Content)) {
				t.Fatalf("post = %+v", p)
			}
		})
	}
	// The blocked user's repost would also fail the other way round.
	if _, err := s.CreatePost(ctx, blocker, social.NewPost{Content: "x", RepostOf: feedPost(t, s, author, social.NewPost{}).ID}); !social.IsCode(err, social.NotFound) {
		t.Fatalf("repost by the blocker: %v", err)
	}
}

// TestPostMedia checks that a post's files come back with the post, in
// order, their alt text cleaned.
func TestPostMedia(t *testing.T) {
	s, _ := feedStore(t)
	u := feedUsers(t, s, 1)
	m := feedPost(t, s, u[0], social.NewPost{Content: "pictures", Media: []social.Media{
		{ID: "a1", Kind: social.Image, MIME: "image/png", Bytes: 10, Width: 2, Height: 3, Alt: " a cat ", Key: "media/a1"},
		{ID: "b2", Kind: social.Audio, MIME: "audio/ogg", Bytes: 20, Duration: 1.5, Key: "media/b2"},
	}})
	if len(m.Media) != 2 || m.Media[0].Alt != "a cat" {
		t.Fatalf("media = %+v", m.Media)
	}
	got, err := s.VisiblePosts(context.Background(), u[0], []string{m.ID})
	feedOK(t, err)
	if got[0] == nil || !reflect.DeepEqual(got[0], m) {
		t.Errorf("post = %+v, want %+v", got[0], m)
	}
	if _, err := s.CreatePost(context.Background(), u[0], social.NewPost{Content: "x", Media: []social.Media{{Alt: "\u202e"}}}); social.ErrorCode(err) != social.BadUserInput {
		t.Errorf("an alt text with a bidi override: %v, want BAD_USER_INPUT", err)
	}
}

func TestCreatePostWritesAndIDs(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	a := feedPost(t, s, u[0], social.NewPost{Content: "  first  "})
	b := feedPost(t, s, u[0], social.NewPost{Content: "second", NotTo: []string{u[1], u[1]}})
	r := feedPost(t, s, u[1], social.NewPost{Content: "repost", RepostOf: a.ID})
	if ai, bi := atoi(t, a.ID), atoi(t, b.ID); ai >= bi || a.Content != "first" {
		t.Fatalf("ids %s, %s; content %q", a.ID, b.ID, a.Content)
	}
	got, err := s.VisiblePosts(ctx, u[0], []string{a.ID, b.ID, r.ID})
	feedOK(t, err)
	for i, want := range []*social.Post{a, b, r} {
		if got[i] == nil || !reflect.DeepEqual(got[i], want) {
			t.Errorf("post %d = %+v, want %+v", i, got[i], want)
		}
	}
	aud, err := s.Audience(ctx, b.ID)
	feedOK(t, err)
	if len(aud.NotTo) != 1 || aud.NotTo[0] != u[1] || len(aud.OnlyTo) != 0 {
		t.Errorf("audience = %+v", aud)
	}
	counts, err := s.PostCounts(ctx, []string{a.ID, b.ID, "nope"})
	feedOK(t, err)
	if counts[0].Reposts != 1 || counts[1] != (social.PostCounts{}) || counts[2] != (social.PostCounts{}) {
		t.Errorf("counts = %+v", counts)
	}
	page, err := userPostIDs(ctx, s, u[0], u[0], social.PageRequest{First: 10})
	feedOK(t, err)
	if fmt.Sprint(page.Items) != fmt.Sprint([]string{b.ID, a.ID}) || page.HasNext {
		t.Errorf("own timeline = %+v", page)
	}
	home, err := homeIDs(ctx, s, u[0], social.PageRequest{First: 10})
	feedOK(t, err)
	if fmt.Sprint(home.Items) != fmt.Sprint([]string{b.ID, a.ID}) {
		t.Errorf("own home timeline = %+v", home)
	}
}

func TestVisiblePosts(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 6)
	author, friend, stranger, excluded, blocked, blocker := u[0], u[1], u[2], u[3], u[4], u[5]
	feedOK(t, s.Block(ctx, author, blocked))
	feedOK(t, s.Block(ctx, blocker, author))
	public := feedPost(t, s, author, social.NewPost{})
	only := feedPost(t, s, author, social.NewPost{OnlyTo: []string{friend}})
	not := feedPost(t, s, author, social.NewPost{NotTo: []string{excluded}})
	ids := []string{public.ID, only.ID, not.ID, "424242", "x}"}

	tests := []struct {
		viewer string
		want   string // visibility of public, only, not, missing, malformed
	}{
		{"", "y...."}, // NOT_TO is for signed-in readers only
		{author, "yyy.."},
		{friend, "yyy.."},
		{stranger, "y.y.."},
		{excluded, "y...."},
		{blocked, "....."},
		{blocker, "....."},
	}
	for _, tc := range tests {
		t.Run("viewer "+tc.viewer, func(t *testing.T) {
			got, err := s.VisiblePosts(ctx, tc.viewer, ids)
			feedOK(t, err)
			var b strings.Builder
			for _, p := range got {
				if p != nil {
					b.WriteByte('y')
				} else {
					b.WriteByte('.')
				}
			}
			if b.String() != tc.want {
				t.Fatalf("visible = %s, want %s", b.String(), tc.want)
			}
		})
	}
}

func TestUserTimelinePaging(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	author, viewer, other := u[0], u[1], u[2]
	var visible []string // newest first
	for i := 0; i < 30; i++ {
		in := social.NewPost{Content: fmt.Sprint("post ", i)}
		if i%3 == 1 {
			in.OnlyTo = []string{other} // hidden from viewer
		}
		p := feedPost(t, s, author, in)
		if i%3 != 1 {
			visible = append([]string{p.ID}, visible...)
		}
	}
	tests := []struct {
		name   string
		viewer string
		first  int
		want   []string
	}{
		{"viewer pages of 7", viewer, 7, visible},
		{"anonymous pages of 20", "", 20, visible},
		{"viewer one page", viewer, 100, visible},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			after := ""
			for pages := 0; ; pages++ {
				c, err := userPostIDs(ctx, s, tc.viewer, author, social.PageRequest{First: tc.first, After: after})
				feedOK(t, err)
				if len(c.Items) != min(tc.first, len(tc.want)-len(got)) {
					t.Fatalf("page %d has %d items", pages, len(c.Items))
				}
				got = append(got, c.Items...)
				if !c.HasNext {
					break
				}
				after = c.Cursors[len(c.Cursors)-1]
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Fatalf("got %v\nwant %v", got, tc.want)
			}
		})
	}
	t.Run("blocked viewer sees nothing", func(t *testing.T) {
		feedOK(t, s.Block(ctx, author, other))
		c, err := userPostIDs(ctx, s, other, author, social.PageRequest{First: 10})
		feedOK(t, err)
		if len(c.Items) != 0 || c.HasNext {
			t.Fatalf("page = %+v", c)
		}
	})
	t.Run("bad cursors", func(t *testing.T) {
		for _, after := range []string{"junk", social.EncodeCursor("x"), social.EncodeCursor("1", "2"), social.EncodeCursor("01")} {
			_, err := userPostIDs(ctx, s, viewer, author, social.PageRequest{First: 10, After: after})
			if !social.IsCode(err, social.BadUserInput) {
				t.Errorf("after %q: %v", after, err)
			}
		}
	})
}

// TestAnonymousUserTimelineSkipsHidden: an anonymous viewer's page of a
// user is read from the user's public posts, so posts hidden by their
// audience cost it nothing: one public post below 600 ONLY_TO posts is
// the first page, complete, where scanning every post would end the
// rounds short of it.
func TestAnonymousUserTimelineSkipsHidden(t *testing.T) {
	s, _ := feedStore(t)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	author, reader := u[0], u[1]
	public := feedPost(t, s, author, social.NewPost{Content: "public"})
	for i := 0; i < 600; i++ {
		feedPost(t, s, author, social.NewPost{Content: fmt.Sprint("hidden ", i), OnlyTo: []string{reader}})
	}
	c, err := userPostIDs(ctx, s, "", author, social.PageRequest{First: 1})
	feedOK(t, err)
	if fmt.Sprint(c.Items) != fmt.Sprint([]string{public.ID}) || c.HasNext {
		t.Fatalf("anonymous page = %v (next %v), want [%s] and no next", c.Items, c.HasNext, public.ID)
	}
	c, err = userPostIDs(ctx, s, reader, author, social.PageRequest{First: 1})
	feedOK(t, err)
	if len(c.Items) != 1 || c.Items[0] == public.ID {
		t.Fatalf("the audience's page = %v, want the newest hidden post", c.Items)
	}
}
