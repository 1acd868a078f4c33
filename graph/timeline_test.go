package graph_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

var feedModes = []redisstore.FeedMode{redisstore.Push, redisstore.Pull, redisstore.Hybrid}

func TestTimelineArguments(t *testing.T) {
	s := newFeedServer(t, redisstore.Hybrid)
	u := s.Register(t, "reader")
	tests := []struct {
		name  string
		token string
		doc   string
		vars  map[string]any
		code  string
	}{
		{"anonymous home", "", feedHomeDoc, nil, "UNAUTHENTICATED"},
		{"first 0", u.Token, feedHomeDoc, map[string]any{"first": 0}, "BAD_USER_INPUT"},
		{"first 101", u.Token, feedHomeDoc, map[string]any{"first": 101}, "BAD_USER_INPUT"},
		{"bad cursor", u.Token, feedHomeDoc, map[string]any{"after": "nope"}, "BAD_USER_INPUT"},
		{"bad user cursor", "", feedUserDoc, map[string]any{"u": u.ID, "after": social.EncodeCursor("x")}, "BAD_USER_INPUT"},
		{"anonymous user timeline", "", feedUserDoc, map[string]any{"u": u.ID}, ""},
		{"unknown user timeline", "", feedUserDoc, map[string]any{"u": "987654"}, ""},
		{"first 100", u.Token, feedHomeDoc, map[string]any{"first": 100}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r := s.Do(t, tt.token, tt.doc, tt.vars); r.Code() != tt.code {
				t.Fatalf("code %q (%+v), want %q", r.Code(), r.Errors, tt.code)
			}
		})
	}
}

// feedNet is a random network written through the API.
type feedNet struct {
	users   []gatewaytest.User
	posts   []string
	author  []int
	onlyTo  [][]int
	notTo   [][]int
	deleted map[string]bool
	// locked: the users whose accounts are locked at the end.
	locked map[int]bool
}

// setLocked locks or unlocks user i's account through updateProfile.
func (n *feedNet) setLocked(t *testing.T, s *feedServer, i int, locked bool) {
	t.Helper()
	s.MustDo(t, n.users[i].Token, `mutation($l: Boolean) { updateProfile(input: {locked: $l}) { locked } }`, map[string]any{"l": locked})
	n.locked[i] = locked
}

// settleRequests has user i approve every other pending follow request
// and reject the rest, through the API.
func (n *feedNet) settleRequests(t *testing.T, s *feedServer, i int) {
	t.Helper()
	r := s.MustDo(t, n.users[i].Token, `{ followRequests(first: 100) { edges { node { id } } } }`, nil)
	edges, _ := r.Get("followRequests.edges").([]any)
	for j, e := range edges {
		op := "approveFollowRequest"
		if j%2 == 1 {
			op = "rejectFollowRequest"
		}
		id := e.(map[string]any)["node"].(map[string]any)["id"]
		s.MustDo(t, n.users[i].Token, fmt.Sprintf(`mutation($u: ID!) { %s(userId: $u) { id } }`, op), map[string]any{"u": id})
	}
}

func buildFeedNet(t *testing.T, s *feedServer, rng *rand.Rand, nUsers, nPosts int) *feedNet {
	t.Helper()
	n := &feedNet{deleted: map[string]bool{}, locked: map[int]bool{}}
	for i := 0; i < nUsers; i++ {
		n.users = append(n.users, s.Register(t, fmt.Sprint("n", i)))
	}
	// User 1 is locked from the start: its follows are requests.
	n.setLocked(t, s, 1, true)
	edit := func(op string, ab [2]int) {
		a, b := ab[0], ab[1]
		r := s.Do(t, n.users[a].Token, fmt.Sprintf(`mutation($u: ID!) { %s(userId: $u) { id } }`, op), map[string]any{"u": n.users[b].ID})
		if c := r.Code(); c != "" && c != "FORBIDDEN" && c != "BAD_USER_INPUT" {
			t.Fatalf("%s: %+v", op, r.Errors)
		}
	}
	pair := func() [2]int { return [2]int{rng.IntN(nUsers), rng.IntN(nUsers)} }
	for i := 0; i < nUsers*3; i++ {
		edit("follow", pair())
	}
	n.settleRequests(t, s, 1)
	for i := 0; i < nPosts; i++ {
		a := rng.IntN(nUsers)
		in := map[string]any{"content": fmt.Sprint("post ", i)}
		var only, not []int
		switch rng.IntN(4) {
		case 0:
			only = []int{rng.IntN(nUsers), rng.IntN(nUsers)}
			in["onlyTo"] = []string{n.users[only[0]].ID, n.users[only[1]].ID}
		case 1:
			not = []int{rng.IntN(nUsers)}
			in["notTo"] = []string{n.users[not[0]].ID}
		}
		if j := rng.IntN(max(i, 1)); i > 0 && rng.IntN(5) == 0 && n.posts[j] != "" {
			// A repost has its original's audience (and an ONLY_TO
			// original's author is in it).
			in["repostOf"] = n.posts[j]
			delete(in, "onlyTo")
			delete(in, "notTo")
			only, not = n.onlyTo[j], n.notTo[j]
			if only != nil {
				only = append(slices.Clip(only), n.author[j])
			}
		}
		r := s.Do(t, n.users[a].Token, feedCreateDoc, map[string]any{"i": in})
		id := r.Str("createPost.id")
		if id == "" {
			if c := r.Code(); c != "NOT_FOUND" && c != "FORBIDDEN" {
				t.Fatalf("createPost: %+v", r.Errors)
			}
		}
		n.posts, n.author, n.onlyTo, n.notTo = append(n.posts, id), append(n.author, a), append(n.onlyTo, only), append(n.notTo, not)
		switch i {
		case nPosts / 3:
			for j := 0; j < nUsers/3; j++ {
				edit("block", pair())
			}
			s.drain(t)
		case nPosts / 4:
			// User 2 locks with public posts written; user 3 locks, is
			// asked, and unlocks (approving what is pending).
			n.setLocked(t, s, 2, true)
			n.setLocked(t, s, 3, true)
		case nPosts / 2:
			for j := 0; j < nUsers; j++ {
				edit("follow", pair())
			}
			n.settleRequests(t, s, 2)
			n.setLocked(t, s, 3, false)
			for j := 0; j < nUsers/3; j++ {
				edit("mute", pair())
			}
		}
	}
	for i := 0; i < nPosts/8; i++ {
		j := rng.IntN(nPosts)
		if id := n.posts[j]; id != "" && !n.deleted[id] {
			s.MustDo(t, n.users[n.author[j]].Token, feedDeleteDoc, map[string]any{"id": id})
			n.deleted[id] = true
		}
	}
	s.drain(t)
	return n
}

// TestTimelinesEndToEnd writes a random network through the API in each
// fan-out mode and reads it back through every path a post can be seen
// by: timeline, userTimeline, User.posts, post(id) and repostOf. Nothing
// shows a post its viewer may not see; the home timeline shows exactly the
// visible posts of the viewer and of the users they follow and have not
// muted; and all three modes give the same pages.
func TestTimelinesEndToEnd(t *testing.T) {
	var first []string
	for _, mode := range feedModes {
		t.Run(string(mode), func(t *testing.T) {
			s := newFeedServer(t, mode, func(c *redisstore.FeedConfig) {
				c.HomeCap, c.Backfill, c.CelebrityThreshold = 6, 4, 2
			})
			n := buildFeedNet(t, s, rand.New(rand.NewPCG(3, 5)), 7, 40)
			got := checkFeedNet(t, s, n)
			if first == nil {
				first = got
				return
			}
			for i := range got {
				if got[i] != first[i] {
					t.Errorf("%s differs from %s:\n%s\n%s", mode, feedModes[0], got[i], first[i])
				}
			}
		})
	}
}

// checkFeedNet checks every read path of every viewer and returns the home
// timelines as indexes into the network's posts.
func checkFeedNet(t *testing.T, s *feedServer, n *feedNet) []string {
	t.Helper()
	ctx := context.Background()
	ids := make([]string, len(n.users))
	for i, u := range n.users {
		ids[i] = u.ID
	}
	rel := map[string][]social.Relation{}
	for _, u := range n.users {
		r, err := s.Store.Relations(ctx, u.ID, ids)
		if err != nil {
			t.Fatal(err)
		}
		rel[u.ID] = r
	}
	has := func(list []int, v string) bool {
		return slices.ContainsFunc(list, func(i int) bool { return ids[i] == v })
	}
	visible := func(v string, j int) bool {
		id, a := n.posts[j], n.author[j]
		switch {
		case id == "" || n.deleted[id]:
			return false
		case ids[a] == v:
			return true
		case n.locked[a] && (v == "" || !rel[v][a].ViewerFollows):
			return false // a locked account's posts are its followers'
		case v != "" && (rel[v][a].ViewerBlocked || rel[v][a].BlockedViewer):
			return false
		case n.onlyTo[j] != nil:
			return has(n.onlyTo[j], v)
		case n.notTo[j] != nil: // not public: signed-in readers it does not list
			return v != "" && !has(n.notTo[j], v)
		}
		return true
	}
	index := func(id string) int { return slices.Index(n.posts, id) }
	var homes []string
	viewers := append([]gatewaytest.User{{}}, n.users...)
	for _, v := range viewers {
		for j, id := range n.posts {
			if id == "" {
				continue
			}
			r := s.MustDo(t, v.Token, `query($id: ID!) { post(id: $id) { id repostOf { id } } }`, map[string]any{"id": id})
			if (r.Get("post") != nil) != visible(v.ID, j) {
				t.Fatalf("viewer %q, post(%s) = %v, want visible %v", v.ID, id, r.Get("post"), visible(v.ID, j))
			}
			if orig := r.Str("post.repostOf.id"); orig != "" && !visible(v.ID, index(orig)) {
				t.Fatalf("viewer %q sees hidden post %s as repostOf", v.ID, orig)
			}
		}
		for a, u := range n.users {
			var want []string
			for j := len(n.posts) - 1; j >= 0; j-- {
				if n.author[j] == a && visible(v.ID, j) {
					want = append(want, n.posts[j])
				}
			}
			for _, path := range []struct{ doc, at string }{{feedUserDoc, "userTimeline"}, {feedUserPostsDoc, "user.posts"}} {
				got := s.pages(t, v.Token, path.doc, path.at, map[string]any{"u": u.ID}, 3)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("viewer %q, %s of %s:\ngot  %v\nwant %v", v.ID, path.at, u.ID, got, want)
				}
			}
		}
		if v.Token == "" {
			continue
		}
		me := slices.Index(ids, v.ID)
		var want []string
		for j := len(n.posts) - 1; j >= 0; j-- {
			a := n.author[j]
			if (a == me || (rel[v.ID][a].ViewerFollows && !rel[v.ID][a].ViewerMuted)) && visible(v.ID, j) {
				want = append(want, n.posts[j])
			}
		}
		got := s.pages(t, v.Token, feedHomeDoc, "timeline", nil, 4)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("timeline of %s:\ngot  %v\nwant %v", v.ID, got, want)
		}
		var idx []int
		for _, id := range got {
			idx = append(idx, index(id))
		}
		homes = append(homes, fmt.Sprint(idx))
	}
	return homes
}
