package graph_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// memStore serves every read from memory, so BenchmarkExecuteReference
// measures GraphQL execution alone: parsing is cached, and what is left is
// field resolution, loaders and JSON rendering.
type memStore struct {
	graph.Posts
	graph.Engagement
	posts    map[string]*social.Post
	users    map[string]*social.User
	comments map[string]*social.Comment
	home     []string
	byPost   map[string][]string
}

func newMemStore(n int) *memStore {
	m := &memStore{posts: map[string]*social.Post{}, users: map[string]*social.User{}, comments: map[string]*social.Comment{}, byPost: map[string][]string{}}
	now := time.Now()
	for i := 1; i <= 50; i++ {
		id := strconv.Itoa(i)
		m.users[id] = &social.User{ID: id, Name: "user_" + id, CreatedAt: now}
	}
	cid := 0
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(1000 + i)
		p := &social.Post{ID: id, AuthorID: strconv.Itoa(1 + i%50), Content: "post number " + id + " with some words in it", CreatedAt: now, Visibility: social.Public}
		if i%4 == 0 {
			p.RepostOfID = strconv.Itoa(1000 + i - 1)
		}
		m.posts[id] = p
		m.home = append(m.home, id)
		for j := 0; j < 3; j++ {
			cid++
			c := &social.Comment{ID: strconv.Itoa(cid), PostID: id, AuthorID: strconv.Itoa(1 + (i+j)%50), Content: "a comment", CreatedAt: now}
			m.comments[c.ID] = c
			m.byPost[id] = append(m.byPost[id], c.ID)
		}
	}
	return m
}

func pick[V any](m map[string]V, ids []string) []V {
	out := make([]V, len(ids))
	for i, id := range ids {
		out[i] = m[id]
	}
	return out
}

func (m *memStore) Users(_ context.Context, ids []string) ([]*social.User, error) {
	return pick(m.users, ids), nil
}
func (m *memStore) UserCounts(_ context.Context, ids []string) ([]social.UserCounts, error) {
	return make([]social.UserCounts, len(ids)), nil
}
func (m *memStore) Relations(_ context.Context, _ string, ids []string) ([]social.Relation, error) {
	return make([]social.Relation, len(ids)), nil
}
func (m *memStore) VisiblePosts(_ context.Context, _ string, ids []string) ([]*social.Post, error) {
	return pick(m.posts, ids), nil
}
func (m *memStore) PostCounts(_ context.Context, ids []string) ([]social.PostCounts, error) {
	out := make([]social.PostCounts, len(ids))
	for i := range out {
		out[i] = social.PostCounts{Likes: 7, Comments: 3, Reposts: 1}
	}
	return out, nil
}
func (m *memStore) Marks(_ context.Context, _ string, ids []string) ([]social.Marks, error) {
	return make([]social.Marks, len(ids)), nil
}
func (m *memStore) Comments(_ context.Context, ids []string) ([]*social.Comment, error) {
	return pick(m.comments, ids), nil
}

func (m *memStore) PostEdits(_ context.Context, ids []string) ([][]social.PostEdit, error) {
	return make([][]social.PostEdit, len(ids)), nil
}

// HomePage builds the page a store would, with everything w asks for, so
// the benchmark runs the primed path the gateway runs.
func (m *memStore) HomePage(_ context.Context, _ string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error) {
	ids := m.home[:min(p.First, len(m.home))]
	page := &readplan.Page{
		Users: map[string]*social.User{}, Counts: map[string]social.PostCounts{}, Marks: map[string]social.Marks{},
		Comments: map[string]social.Connection[*social.Comment]{}, Originals: map[string]*social.Post{},
	}
	page.Posts.HasNext = true
	for _, id := range ids {
		post := m.posts[id]
		page.Posts.Items = append(page.Posts.Items, post)
		page.Posts.Cursors = append(page.Posts.Cursors, social.EncodeCursor(id))
		page.Users[post.AuthorID] = m.users[post.AuthorID]
		page.Counts[id] = social.PostCounts{Likes: 7, Comments: 3, Reposts: 1}
		page.Marks[id] = social.Marks{}
		var cc social.Connection[*social.Comment]
		for _, cid := range m.byPost[id][:min(w.Comments, len(m.byPost[id]))] {
			c := m.comments[cid]
			cc.Items = append(cc.Items, c)
			cc.Cursors = append(cc.Cursors, social.EncodeCursor(cid))
			page.Users[c.AuthorID] = m.users[c.AuthorID]
		}
		cc.Total = len(m.byPost[id])
		page.Comments[id] = cc
		if post.RepostOfID != "" {
			orig := m.posts[post.RepostOfID]
			page.Originals[orig.ID] = orig
			page.Users[orig.AuthorID] = m.users[orig.AuthorID]
		}
	}
	return page, nil
}

func (m *memStore) UserPage(ctx context.Context, v, _ string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error) {
	return m.HomePage(ctx, v, p, w)
}

func (m *memStore) UserPages(ctx context.Context, v string, keys []readplan.UserPageKey) ([]*readplan.Page, []error) {
	out := make([]*readplan.Page, len(keys))
	for i, k := range keys {
		out[i], _ = m.HomePage(ctx, v, k.Page, k.Wants)
	}
	return out, nil
}

func (m *memStore) Follows(_ context.Context, pairs []social.FollowPair) ([]bool, error) {
	return make([]bool, len(pairs)), nil
}

func (m *memStore) PinnedIDs(_ context.Context, ids []string) ([][]string, error) {
	return make([][]string, len(ids)), nil
}

func (m *memStore) UserDetails(_ context.Context, _ string, ids []string, w readplan.UserWants) (readplan.UserDetails, error) {
	return readplan.UserDetails{Users: pick(m.users, ids), Counts: make([]social.UserCounts, len(ids)), Relations: make([]social.Relation, len(ids))}, nil
}

// ListPages serves comments; the reference query reads no other list.
func (m *memStore) ListPages(_ context.Context, _ string, keys []readplan.ListKey) ([]readplan.ListPage, []error) {
	out := make([]readplan.ListPage, len(keys))
	for i, k := range keys {
		if k.List != readplan.ListComments {
			continue
		}
		ids := m.byPost[k.Parent]
		ids = ids[:min(k.Page.First, len(ids))]
		c := social.Connection[*social.Comment]{Total: len(m.byPost[k.Parent])}
		for _, id := range ids {
			c.Items = append(c.Items, m.comments[id])
			c.Cursors = append(c.Cursors, social.EncodeCursor(id))
		}
		out[i].Comments = c
	}
	return out, nil
}

type fixedViewer struct{}

func (fixedViewer) Authenticate(context.Context, string) (social.Viewer, error) {
	return social.Viewer{UserID: "1"}, nil
}

func referenceQuery(tb testing.TB) []byte {
	body, _ := json.Marshal(map[string]string{"query": graph.ReferenceQuery})
	return body
}

// BenchmarkExecuteReference runs the reference query (a 20-post home page
// with authors, counters, three comments each and reposts) through the
// whole HTTP handler over an in-memory store: the GraphQL share of a page.
func BenchmarkExecuteReference(b *testing.B) {
	m := newMemStore(20)
	loaders := loader.DefaultConfig()
	if w := os.Getenv("LOADER_WAIT"); w != "" {
		loaders.Wait, _ = time.ParseDuration(w)
	}
	h := gateway.NewQuery(&graph.Resolver{Posts: m, Engagement: m}, m, fixedViewer{}, gateway.QueryOptions{MaxBodyBytes: 1 << 20, Loaders: loaders})
	body := referenceQuery(b)
	run := func() *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer x")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	if w := run(); w.Code != 200 || bytes.Contains(w.Body.Bytes(), []byte(`"errors"`)) {
		b.Fatalf("reference query failed: %d %s", w.Code, w.Body)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		run()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/page")
}
