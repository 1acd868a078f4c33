package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/socialgw/gateway/graph"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/seed"
	"github.com/socialgw/gateway/internal/social"
)

// The read-path costs: Redis round trips and commands per request,
// counted by the hook, which the machine's load does not move.

// pulledPrefix is the prefix of the pulled-authors data sets (+ mode and
// the number of authors).
const pulledPrefix = "bench-pulled-"

// nestedFirsts are the page sizes the nested-lists query is read at.
var nestedFirsts = []int{1, 5, 20, 50, 100}

// NestedQuery is the reference query with lists nested two levels deep:
// each post's author's followers, and its likers with their followers.
var NestedQuery = func() string {
	q := strings.Replace(graph.ReferenceQuery, "query Ref {", "query Nested($first: Int) {", 1)
	q = strings.Replace(q, "timeline(first: 20) {", "timeline(first: $first) {", 1)
	// The first "author { id name }" is the post's own.
	return strings.Replace(q, "author { id name }\n",
		"author { id name followers(first: 3) { totalCount edges { node { id name } } } }\n"+
			"      likers(first: 5) { totalCount edges { node { id name followers(first: 3) { totalCount edges { node { name } } } } } }\n", 1)
}()

// Costs are the round trips and commands of the read-path measurements.
type Costs struct {
	Reader string
	// Nested[i] is the cost of NestedQuery at nestedFirsts[i] through the
	// gateway; Posts[i] the page's posts.
	Nested []counts
	Posts  []int
	// Pulled are the commands of a 20-post home page (reference wants) of
	// a reader following 1 and 200 pulled authors, per mode.
	Pulled []PulledCost
}

// PulledCost is one mode's pulled-authors measurement.
type PulledCost struct {
	Mode                redisstore.FeedMode
	One, Many           counts
	OnePosts, ManyPosts int
	ManyAuthors         int // the many pulled authors (--pulled-authors)
	PostsOne            int // posts of the one author
}

// measureCosts runs both measurements.
func (b *Bench) measureCosts(ctx context.Context) (*Costs, error) {
	rs, err := b.readers(ctx, 1)
	if err != nil {
		return nil, err
	}
	url, err := b.serve()
	if err != nil {
		return nil, err
	}
	c := &Costs{Reader: rs[0].id}
	client := &http.Client{}
	for _, first := range nestedFirsts {
		c0 := b.counts()
		n, err := postNested(ctx, client, url+"/query", rs[0].token, first)
		if err != nil {
			return nil, err
		}
		c.Nested = append(c.Nested, b.counts().since(c0))
		c.Posts = append(c.Posts, n)
	}
	for _, mode := range []redisstore.FeedMode{redisstore.Hybrid, redisstore.Pull} {
		pc := PulledCost{Mode: mode, ManyAuthors: b.cfg.PulledAuthors, PostsOne: 30}
		if pc.One, pc.OnePosts, err = b.pulledPage(ctx, mode, 1, 30); err != nil {
			return nil, err
		}
		if pc.Many, pc.ManyPosts, err = b.pulledPage(ctx, mode, pc.ManyAuthors, 3); err != nil {
			return nil, err
		}
		c.Pulled = append(c.Pulled, pc)
	}
	return c, nil
}

// postNested reads NestedQuery and returns the posts of its page.
func postNested(ctx context.Context, client *http.Client, url, token string, first int) (int, error) {
	body, _ := json.Marshal(map[string]any{"query": NestedQuery, "variables": map[string]any{"first": first}})
	b, err := postQuery(ctx, client, url, token, body)
	if err != nil {
		return 0, err
	}
	var r struct {
		Data struct {
			Timeline struct {
				Edges []json.RawMessage `json:"edges"`
			} `json:"timeline"`
		} `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return 0, fmt.Errorf("%s: %w", url, err)
	}
	return len(r.Data.Timeline.Edges), nil
}

// pulledPage seeds a reader following authors pulled authors (hybrid with
// the celebrity threshold at 0, or pull mode), each with posts posts and a
// comment by the reader on every other one, and returns the cost of the
// reader's second first page (the first warms the scripts and the list).
func (b *Bench) pulledPage(ctx context.Context, mode redisstore.FeedMode, authors, posts int) (counts, int, error) {
	prefix := fmt.Sprintf("%s%s-%d:", pulledPrefix, mode, authors)
	if err := seed.Clear(ctx, b.rdb, prefix); err != nil {
		return counts{}, 0, err
	}
	defer func() { _ = seed.Clear(ctx, b.rdb, prefix) }()
	store := redisstore.New(b.rdb, prefix)
	feed := redisstore.DefaultFeed()
	feed.Mode, feed.CelebrityThreshold = mode, 0
	if err := store.SetFeed(feed); err != nil {
		return counts{}, 0, err
	}
	ids := make([]string, authors+1)
	for i := range ids {
		name := fmt.Sprintf("pulled%d", i)
		u, err := store.CreateUser(ctx, social.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: "x"})
		if err != nil {
			return counts{}, 0, err
		}
		ids[i] = u.ID
	}
	reader := ids[0]
	for _, a := range ids[1:] {
		if err := store.Follow(ctx, reader, a); err != nil {
			return counts{}, 0, err
		}
	}
	jobs := 0
	for p := 0; p < posts; p++ {
		for _, a := range ids[1:] {
			post, err := store.CreatePost(ctx, a, social.NewPost{Content: fmt.Sprint("post ", p)})
			if err != nil {
				return counts{}, 0, err
			}
			jobs++
			if p%2 == 0 {
				if _, err := store.AddComment(ctx, reader, post.ID, "seen"); err != nil {
					return counts{}, 0, err
				}
			}
		}
	}
	w, err := newWorker(store)
	if err != nil {
		return counts{}, 0, err
	}
	if err := drain(ctx, w, jobs); err != nil {
		return counts{}, 0, err
	}
	req := social.PageRequest{First: social.DefaultFirst}
	if _, err := store.HomePage(ctx, reader, req, referenceWants); err != nil {
		return counts{}, 0, err
	}
	c0 := b.counts()
	page, err := store.HomePage(ctx, reader, req, referenceWants)
	if err != nil {
		return counts{}, 0, err
	}
	return b.counts().since(c0), len(page.Posts.Items), nil
}
