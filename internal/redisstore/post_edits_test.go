package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// TestEditPostRules: only the author edits, a deleted post or a plain
// repost is not edited, bad input is refused, and none of these changes
// anything; an edit keeps the audience, files and original, and its
// previous version, newest first, at most social.MaxEdits.
func TestEditPostRules(t *testing.T) {
	s, _ := feedStore(t)
	s.CachePosts(100)
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	author, other, insider := u[0], u[1], u[2]
	p := feedPost(t, s, author, social.NewPost{Content: "first", OnlyTo: []string{insider}, Source: "web"}).ID
	original := feedPost(t, s, other, social.NewPost{Content: "theirs"}).ID
	pr, err := s.CreatePost(ctx, author, social.NewPost{RepostOf: original})
	feedOK(t, err)
	plain := pr.ID
	gone := feedPost(t, s, author, social.NewPost{Content: "gone"}).ID
	feedOK(t, s.DeletePost(ctx, author, gone))
	edit := social.EditPost{Content: "second", SpoilerText: "cw", Sensitive: true}

	for _, tc := range []struct {
		name, viewer, post string
		in                 social.EditPost
		code               social.Code
	}{
		{"another user's post", author, original, edit, social.Forbidden},
		{"a post the editor may not see", other, p, edit, social.NotFound},
		{"a deleted post", author, gone, edit, social.NotFound},
		{"a plain repost", author, plain, edit, social.BadUserInput},
		{"empty content", author, p, social.EditPost{Content: "  "}, social.BadUserInput},
		{"too long a spoiler text", author, p, social.EditPost{Content: "x", SpoilerText: strings.Repeat("y", social.MaxSpoilerLen+1)}, social.BadUserInput},
		{"a malformed id", author, "x1", edit, social.NotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.EditPost(ctx, tc.viewer, tc.post, tc.in)
			wantEngCode(t, tc.name, err, tc.code)
		})
	}
	if got, _ := s.PostEdits(ctx, []string{p, original}); len(got[0])+len(got[1]) != 0 {
		t.Fatalf("refused edits left versions: %+v", got)
	}
	if got, _ := checked(t, s, author, original); got.Content != "theirs" || got.EditedAt != nil {
		t.Fatalf("refused edit changed the post: %+v", got)
	}
	if got, _ := checked(t, s, author, plain); got.Content != "" || got.EditedAt != nil {
		t.Fatalf("refused edit changed the post: %+v", got)
	}

	e, err := s.EditPost(ctx, author, p, edit)
	feedOK(t, err)
	if e.Content != "second" || e.SpoilerText == nil || *e.SpoilerText != "cw" || !e.Sensitive || e.EditedAt == nil ||
		e.Visibility != social.OnlyTo || e.Source != "web" {
		t.Fatalf("edited: %+v", e)
	}
	got, _ := checked(t, s, insider, p)
	if got.Content != "second" || !got.Sensitive || got.EditedAt == nil || !got.EditedAt.Equal(*e.EditedAt) {
		t.Fatalf("read after the edit: %+v", got)
	}
	for i := range social.MaxEdits + 5 {
		_, err := s.EditPost(ctx, author, p, social.EditPost{Content: fmt.Sprintf("v%d", i)})
		feedOK(t, err)
	}
	edits, err := s.PostEdits(ctx, []string{p})
	feedOK(t, err)
	if n := len(edits[0]); n != social.MaxEdits {
		t.Fatalf("%d versions kept, want %d", n, social.MaxEdits)
	}
	if h := edits[0][0]; h.Content != fmt.Sprintf("v%d", social.MaxEdits+3) || h.Sensitive || h.SpoilerText != nil {
		t.Errorf("newest version %+v", h)
	}
	if h := edits[0][social.MaxEdits-1]; h.Content != "v4" {
		t.Errorf("oldest version kept %+v, want v4", h)
	}
}

// TestEditSeenAcrossStores: an edit through one store shows at once
// through another whose post cache holds the post, on a timeline page as
// on a single read.
func TestEditSeenAcrossStores(t *testing.T) {
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	a, b := postCacheStore(t, prefix), postCacheStore(t, prefix)
	author, fan := engUser(t, a, "author"), engUser(t, a, "fan")
	feedOK(t, a.Follow(ctx, fan, author))
	id := engPost(t, a, author, social.NewPost{Content: "before"})
	page := func() *social.Post {
		pg, err := b.UserPage(ctx, fan, author, social.PageRequest{First: 5}, readplan.PageWants{})
		feedOK(t, err)
		return pg.Posts.Items[0]
	}
	checked(t, b, fan, id)
	if p := page(); p.Content != "before" {
		t.Fatalf("page before: %+v", p)
	}
	hits := b.PostCacheStats().Hits
	_, err := a.EditPost(ctx, author, id, social.EditPost{Content: "after", SpoilerText: "cw"})
	feedOK(t, err)
	for _, p := range []*social.Post{page(), func() *social.Post { p, _ := checked(t, b, fan, id); return p }()} {
		if p.Content != "after" || p.SpoilerText == nil || p.EditedAt == nil {
			t.Errorf("read through the other store after the edit: %+v", p)
		}
	}
	if b.PostCacheStats().Hits <= hits {
		t.Errorf("the reads after the edit missed the cache: %+v", b.PostCacheStats())
	}
}

// TestEditNotifications: an edit's mentions are recomputed (a user newly
// mentioned who may see the post is told, one no longer mentioned loses
// the notification, one who may not see it hears nothing), plain
// reposters are told of each edit, and the original's deletion takes
// those notifications with it.
func TestEditNotifications(t *testing.T) {
	cfg := feedConfig(redisstore.Push)
	s, rdb := feedStore(t, cfg)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 5)
	author, first, second, reposter, hidden := u[0], u[1], u[2], u[3], u[4]
	name := map[string]string{author: "author", first: "first", second: "second", reposter: "reposter", hidden: "hidden"}
	at := func(i int) string { return "@" + fmt.Sprintf("u%d_%s", i, t.Name()) }
	p := feedPost(t, s, author, social.NewPost{Content: "hi " + at(1), NotTo: []string{hidden}}).ID
	_, err := s.CreatePost(ctx, reposter, social.NewPost{RepostOf: p})
	feedOK(t, err)
	drain(t, w)

	steps := []struct {
		name    string
		content string
		want    map[string][]string
	}{
		{"mention moved", "hi " + at(2) + " " + at(4), map[string][]string{first: nil, second: {"MENTION author/1 " + p},
			hidden: nil, reposter: {"EDIT author/1 " + p}}},
		{"second edit", "hi " + at(1) + " " + at(2), map[string][]string{first: {"MENTION author/1 " + p}, second: {"MENTION author/1 " + p},
			reposter: {"EDIT author/1 " + p, "EDIT author/1 " + p}}},
	}
	for _, st := range steps {
		_, err := s.EditPost(ctx, author, p, social.EditPost{Content: st.content})
		feedOK(t, err)
		drain(t, w)
		for who, want := range st.want {
			if got, _ := notesOf(t, s, who, name); !slices.Equal(got, want) {
				t.Errorf("%s: %s has %q, want %q", st.name, name[who], got, want)
			}
		}
	}
	feedOK(t, s.DeletePost(ctx, author, p))
	drain(t, w)
	for _, who := range []string{first, second, reposter} {
		if got, _ := notesOf(t, s, who, name); len(got) != 0 {
			t.Errorf("after the deletion %s has %q", name[who], got)
		}
	}
}

// TestEditAnnounced: an edit is announced again on the channels of the
// author and of the followers, and a stream that sent the post sends it
// again at its new version (live's recent set).
func TestEditAnnounced(t *testing.T) {
	s, rdb := feedStore(t, feedConfig(redisstore.Push))
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	author, fan := u[0], u[1]
	feedOK(t, s.Follow(ctx, fan, author))
	p := feedPost(t, s, author, social.NewPost{Content: "one"}).ID
	drain(t, w)
	ps := listenLive(t, s, rdb, fan)
	_, err := s.EditPost(ctx, author, p, social.EditPost{Content: "two"})
	feedOK(t, err)
	drain(t, w)
	got := heard(t, ps)
	if !slices.Contains(got, p+":"+author) {
		t.Fatalf("the follower's channel heard %q, want the edited post %s", got, p)
	}
	posts, err := s.LivePosts(ctx, fan, got)
	feedOK(t, err)
	if posts[0] == nil || posts[0].Content != "two" {
		t.Fatalf("the announced post as checked for the follower: %+v", posts[0])
	}
}

// TestEditMovesTags: an edit moves the post out of the tags it lost and
// into those it gained, in the tag timelines.
func TestEditMovesTags(t *testing.T) {
	s, rdb := feedStore(t, feedConfig(redisstore.Push))
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	author, reader := u[0], u[1]
	p := feedPost(t, s, author, social.NewPost{Content: "learning #golang and #redis"}).ID
	drain(t, w)
	ids := func(tag string) []string {
		pg, err := s.TagPage(ctx, reader, tag, social.PageRequest{First: 10}, readplan.PageWants{})
		feedOK(t, err)
		var out []string
		for _, x := range pg.Posts.Items {
			out = append(out, x.ID)
		}
		return out
	}
	if got := ids("golang"); !slices.Equal(got, []string{p}) {
		t.Fatalf("#golang before the edit: %v", got)
	}
	_, err := s.EditPost(ctx, author, p, social.EditPost{Content: "learning #rust and #redis"})
	feedOK(t, err)
	drain(t, w)
	for tag, want := range map[string][]string{"golang": nil, "rust": {p}, "redis": {p}} {
		if got := ids(tag); !slices.Equal(got, want) {
			t.Errorf("#%s after the edit: %v, want %v", tag, got, want)
		}
	}
}
