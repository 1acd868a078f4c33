package redisstore_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// postCacheStore returns a store over its own client with the post cache on.
func postCacheStore(t *testing.T, prefix string) *redisstore.Store {
	t.Helper()
	s := redisstore.New(redistest.Client(t), prefix)
	s.CachePosts(100)
	return s
}

// checked reads id through s as viewer, with the counters of its hash.
func checked(t *testing.T, s *redisstore.Store, viewer, id string) (*social.Post, social.PostCounts) {
	t.Helper()
	p, c, err := s.CheckedPost(context.Background(), viewer, id)
	if err != nil {
		t.Fatal(err)
	}
	return p, c
}

// TestPostCacheAcrossStores: a post's fixed fields come from the cache
// of a store that read it once, while a like, a comment and the deletion
// made through another store (gateway) show on its next read, and a block
// at once.
func TestPostCacheAcrossStores(t *testing.T) {
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	a, b := postCacheStore(t, prefix), postCacheStore(t, prefix)
	author, fan := engUser(t, a, "author"), engUser(t, a, "fan")
	in := social.NewPost{Content: "fixed", Location: &social.Location{Name: "Lyon", Latitude: 45.76, Longitude: 4.83}}
	id := engPost(t, a, author, in)

	first, _ := checked(t, b, fan, id)
	hits := b.PostCacheStats().Hits
	again, n := checked(t, b, fan, id)
	if b.PostCacheStats().Hits != hits+1 {
		t.Fatalf("the second read missed the cache: %+v", b.PostCacheStats())
	}
	if first == nil || again == nil || again.Content != "fixed" || again.Location == nil || again.Location.Name != "Lyon" ||
		again.AuthorID != author || !again.CreatedAt.Equal(first.CreatedAt) {
		t.Fatalf("read from the cache: %+v, first read %+v", again, first)
	}
	if n != (social.PostCounts{}) {
		t.Fatalf("counters of a new post: %+v", n)
	}

	feedOK(t, a.Like(ctx, fan, id))
	if _, err := a.AddComment(ctx, fan, id, "hi"); err != nil {
		t.Fatal(err)
	}
	if _, n := checked(t, b, fan, id); n.Likes != 1 || n.Comments != 1 {
		t.Errorf("after a like and a comment through the other store: %+v", n)
	}
	feedOK(t, a.Unlike(ctx, fan, id))
	if _, n := checked(t, b, fan, id); n.Likes != 0 {
		t.Errorf("after an unlike through the other store: %+v", n)
	}

	// Blocks decide visibility and are never cached: one made through
	// the other store holds at once.
	feedOK(t, a.Block(ctx, author, fan))
	if p, _ := checked(t, b, fan, id); p != nil {
		t.Errorf("a post of a user who blocked its reader through the other store still read: %+v", p)
	}
	feedOK(t, a.Unblock(ctx, author, fan))
	if p, _ := checked(t, b, fan, id); p == nil {
		t.Error("unblocked through the other store: the post is still hidden")
	}

	feedOK(t, a.DeletePost(ctx, author, id))
	for _, viewer := range []string{fan, author, ""} {
		if p, _ := checked(t, b, viewer, id); p != nil {
			t.Errorf("viewer %q: the post deleted through the other store still read: %+v", viewer, p)
		}
	}
}

// TestPostCacheHashReplaced: a cached post whose hash now holds another
// post (ids counted again after a flush, or a restore) is read in full.
func TestPostCacheHashReplaced(t *testing.T) {
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	s := postCacheStore(t, prefix)
	author, other := engUser(t, s, "author"), engUser(t, s, "other")
	id := engPost(t, s, author, social.NewPost{Content: "before"})
	checked(t, s, "", id)
	checked(t, s, "", id) // from the cache

	rdb := redistest.Client(t)
	key := s.Keys().Post(id)
	feedOK(t, rdb.Del(ctx, key).Err())
	feedOK(t, rdb.HSet(ctx, key, "author", other, "content", "after", "created", "1700000000000", "vis", "PUBLIC",
		"nlikes", "0", "ncomments", "0", "nreposts", "0", "pv", "1").Err())
	p, _ := checked(t, s, "", id)
	if p == nil || p.Content != "after" || p.AuthorID != other {
		t.Fatalf("read after the hash was replaced: %+v", p)
	}
	if p, _ := checked(t, s, "", id); p == nil || p.Content != "after" {
		t.Fatalf("read again: %+v", p)
	}
}

// TestPostCacheShowsEdits: a write of a post's mutable fields (spoiler
// text, sensitive, edited) through one store shows on the next read of
// another that holds the post in its cache, a read from the cache still;
// a write of a fixed field is refused.
func TestPostCacheShowsEdits(t *testing.T) {
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	a, b := postCacheStore(t, prefix), postCacheStore(t, prefix)
	author, fan := engUser(t, a, "author"), engUser(t, a, "fan")
	id := engPost(t, a, author, social.NewPost{Content: "spoiled", SpoilerText: " the end ", Sensitive: true})
	if p, _ := checked(t, b, fan, id); p == nil || p.SpoilerText == nil || *p.SpoilerText != "the end" || !p.Sensitive || p.EditedAt != nil {
		t.Fatalf("new post read: %+v", p)
	}

	cw, at := "edited warning", time.UnixMilli(1_800_000_000_000).UTC()
	for _, tc := range []struct {
		name string
		edit social.Post
	}{
		{"set", social.Post{SpoilerText: &cw, EditedAt: &at}},
		{"cleared", social.Post{Sensitive: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			feedOK(t, a.SetPostFields(ctx, id, &tc.edit, "spoiler", "sensitive", "edited"))
			hits := b.PostCacheStats().Hits
			cached, _ := checked(t, b, fan, id)
			if b.PostCacheStats().Hits != hits+1 {
				t.Errorf("the read missed the cache: %+v", b.PostCacheStats())
			}
			fresh, err := a.VisiblePosts(ctx, author, []string{id})
			feedOK(t, err)
			for _, p := range []*social.Post{cached, fresh[0]} {
				if p == nil || p.Content != "spoiled" || !reflect.DeepEqual(p.SpoilerText, tc.edit.SpoilerText) ||
					p.Sensitive != tc.edit.Sensitive || !reflect.DeepEqual(p.EditedAt, tc.edit.EditedAt) {
					t.Errorf("read after the edit: %+v, want the fields of %+v", p, tc.edit)
				}
			}
		})
	}

	if err := a.SetPostFields(ctx, id, &social.Post{Source: "elsewhere"}, "src"); err == nil {
		t.Error("a write of src, a fixed field, passed")
	}
	feedOK(t, a.DeletePost(ctx, author, id))
	if err := a.SetPostFields(ctx, id, &social.Post{}, "edited"); !social.IsCode(err, social.NotFound) {
		t.Errorf("a write of a deleted post: %v, want NOT_FOUND", err)
	}
	if n, _ := redistest.Client(t).Exists(ctx, a.Keys().Post(id)).Result(); n != 0 {
		t.Error("the write of a deleted post brought its hash back")
	}
}
