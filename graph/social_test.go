package graph_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// socialFields are the User fields of the social graph as a viewer sees them.
const socialFields = `id followersCount followingCount viewerFollows followsViewer viewerBlocked viewerMuted`

// socialMutation sends one of the graph mutations on userID as token.
func socialMutation(t *testing.T, s *gatewaytest.Server, token, name, userID string) *gatewaytest.Response {
	t.Helper()
	return s.Do(t, token, fmt.Sprintf(`mutation($u: ID!) { m: %s(userId: $u) { %s } }`, name, socialFields), map[string]any{"u": userID})
}

// mustSocial is socialMutation that fails the test on any error.
func mustSocial(t *testing.T, s *gatewaytest.Server, token, name, userID string) *gatewaytest.Response {
	t.Helper()
	r := socialMutation(t, s, token, name, userID)
	if len(r.Errors) > 0 {
		t.Fatalf("%s %s: %+v", name, userID, r.Errors)
	}
	return r
}

// socialView is how token's holder sees userID.
func socialView(t *testing.T, s *gatewaytest.Server, token, userID string) *gatewaytest.Response {
	t.Helper()
	return s.MustDo(t, token, `query($id: ID!) { m: user(id: $id) { `+socialFields+` } }`, map[string]any{"id": userID})
}

// socialState is the part of a User the social graph owns.
type socialState struct {
	followers, following                                     int
	viewerFollows, followsViewer, viewerBlocked, viewerMuted bool
}

func stateOf(r *gatewaytest.Response) socialState {
	return socialState{
		followers:     r.Int("m.followersCount"),
		following:     r.Int("m.followingCount"),
		viewerFollows: r.Get("m.viewerFollows") == true,
		followsViewer: r.Get("m.followsViewer") == true,
		viewerBlocked: r.Get("m.viewerBlocked") == true,
		viewerMuted:   r.Get("m.viewerMuted") == true,
	}
}

func wantState(t *testing.T, what string, r *gatewaytest.Response, want socialState) {
	t.Helper()
	if got := stateOf(r); got != want {
		t.Errorf("%s: %+v, want %+v", what, got, want)
	}
}

var socialMutations = []string{"follow", "unfollow", "block", "unblock", "mute", "unmute"}

func TestSocialMutationsRequireAuth(t *testing.T) {
	s := gatewaytest.New(t)
	target := s.Register(t, "target")
	for _, m := range socialMutations {
		t.Run(m, func(t *testing.T) {
			r := socialMutation(t, s, "", m, target.ID)
			if r.Code() != "UNAUTHENTICATED" {
				t.Fatalf("code %q, want UNAUTHENTICATED: %+v", r.Code(), r.Errors)
			}
		})
	}
}

func TestSocialMutationErrors(t *testing.T) {
	s := gatewaytest.New(t)
	me := s.Register(t, "me")
	blocked := s.Register(t, "blocked")
	blocker := s.Register(t, "blocker")
	mustSocial(t, s, me.Token, "block", blocked.ID)
	mustSocial(t, s, blocker.Token, "block", me.ID)
	type tc struct {
		name, mutation, target, code string
	}
	var cases []tc
	for _, m := range socialMutations {
		cases = append(cases,
			tc{m + " yourself", m, me.ID, "BAD_USER_INPUT"},
			tc{m + " unknown user", m, "999999", "NOT_FOUND"},
		)
	}
	cases = append(cases,
		tc{"follow a user you blocked", "follow", blocked.ID, "FORBIDDEN"},
		tc{"follow a user who blocked you", "follow", blocker.ID, "FORBIDDEN"},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := socialMutation(t, s, me.Token, c.mutation, c.target)
			if r.Code() != c.code {
				t.Fatalf("code %q, want %s: %+v", r.Code(), c.code, r.Errors)
			}
		})
	}
	// The blocked user cannot follow the blocker either.
	if r := socialMutation(t, s, blocked.Token, "follow", me.ID); r.Code() != "FORBIDDEN" {
		t.Fatalf("blocked user follows the blocker: code %q", r.Code())
	}
}

func TestFollowFlagsAndCounts(t *testing.T) {
	s := gatewaytest.New(t)
	a, b := s.Register(t, "a"), s.Register(t, "b")
	r := mustSocial(t, s, a.Token, "follow", b.ID)
	wantState(t, "b after a follows", r, socialState{followers: 1, viewerFollows: true})
	r = mustSocial(t, s, a.Token, "follow", b.ID)
	wantState(t, "b after a follows again", r, socialState{followers: 1, viewerFollows: true})
	wantState(t, "a as b sees a", socialView(t, s, b.Token, a.ID), socialState{following: 1, followsViewer: true})

	// b follows back: mutual.
	r = mustSocial(t, s, b.Token, "follow", a.ID)
	wantState(t, "a after b follows back", r, socialState{followers: 1, following: 1, viewerFollows: true, followsViewer: true})
	wantState(t, "b as a sees b", socialView(t, s, a.Token, b.ID), socialState{followers: 1, following: 1, viewerFollows: true, followsViewer: true})
	wantState(t, "b anonymously", socialView(t, s, "", b.ID), socialState{followers: 1, following: 1})

	r = mustSocial(t, s, a.Token, "unfollow", b.ID)
	wantState(t, "b after a unfollows", r, socialState{following: 1, followsViewer: true})
	r = mustSocial(t, s, a.Token, "unfollow", b.ID)
	wantState(t, "b after a unfollows again", r, socialState{following: 1, followsViewer: true})
}

func TestBlockThroughGraphQL(t *testing.T) {
	s := gatewaytest.New(t)
	a, b, c := s.Register(t, "a"), s.Register(t, "b"), s.Register(t, "c")
	mustSocial(t, s, a.Token, "follow", b.ID)
	mustSocial(t, s, b.Token, "follow", a.ID)
	mustSocial(t, s, c.Token, "follow", b.ID)

	r := mustSocial(t, s, a.Token, "block", b.ID)
	wantState(t, "b after a blocks", r, socialState{followers: 1, viewerBlocked: true})
	wantState(t, "a after blocking", socialView(t, s, a.Token, a.ID), socialState{})
	// The blocked user sees no follow either way, and no flag of the block.
	wantState(t, "a as b sees a", socialView(t, s, b.Token, a.ID), socialState{})
	mustSocial(t, s, a.Token, "block", b.ID)

	for _, f := range []struct{ name, token, target string }{
		{"blocker follows", a.Token, b.ID},
		{"blocked follows", b.Token, a.ID},
	} {
		if r := socialMutation(t, s, f.token, "follow", f.target); r.Code() != "FORBIDDEN" {
			t.Errorf("%s: code %q, want FORBIDDEN", f.name, r.Code())
		}
	}

	r = mustSocial(t, s, a.Token, "unblock", b.ID)
	wantState(t, "b after unblock", r, socialState{followers: 1})
	wantState(t, "a after unblock", socialView(t, s, b.Token, a.ID), socialState{})
	r = mustSocial(t, s, b.Token, "follow", a.ID)
	wantState(t, "a followed after unblock", r, socialState{followers: 1, viewerFollows: true})
}

func TestMuteThroughGraphQL(t *testing.T) {
	s := gatewaytest.New(t)
	a, b := s.Register(t, "a"), s.Register(t, "b")
	mustSocial(t, s, a.Token, "follow", b.ID)
	r := mustSocial(t, s, a.Token, "mute", b.ID)
	wantState(t, "b after a mutes", r, socialState{followers: 1, viewerFollows: true, viewerMuted: true})
	mustSocial(t, s, a.Token, "mute", b.ID)
	// b is not told: b's view of a shows nothing of it.
	wantState(t, "a as b sees a", socialView(t, s, b.Token, a.ID), socialState{following: 1, followsViewer: true})
	r = mustSocial(t, s, a.Token, "unmute", b.ID)
	wantState(t, "b after unmute", r, socialState{followers: 1, viewerFollows: true})
}

func TestFollowConcurrentlyThroughGraphQL(t *testing.T) {
	s := gatewaytest.New(t)
	star := s.Register(t, "star")
	fans := make([]gatewaytest.User, 100)
	for i := range fans {
		fans[i] = s.Register(t, "fan")
	}
	var wg sync.WaitGroup
	follow := func(u gatewaytest.User, busyOK bool) {
		wg.Go(func() {
			r := socialMutation(t, s, u.Token, "follow", star.ID)
			// Edits of one pair run one at a time: a click that waited
			// too long behind the others may be told to retry.
			if len(r.Errors) > 0 && !(busyOK && r.Code() == "RATE_LIMITED" && r.Errors[0].Extensions["retryAfter"] != nil) {
				t.Errorf("follow: %+v", r.Errors)
			}
		})
	}
	for _, f := range fans {
		follow(f, false)
	}
	for range 50 {
		follow(fans[0], true)
	}
	wg.Wait()
	if got := stateOf(socialView(t, s, "", star.ID)).followers; got != 100 {
		t.Errorf("followersCount %d, want 100", got)
	}
	if got := stateOf(socialView(t, s, "", fans[0].ID)).following; got != 1 {
		t.Errorf("followingCount of the repeated follower %d, want 1", got)
	}
}

// listField opens the arguments of a user list field: followers,
// following, or commonFollowing with the user id with.
func listField(name, with string) string {
	if with != "" {
		return fmt.Sprintf("%s(with: %q, ", name, with)
	}
	return name + "("
}

// socialPage reads one page of a user list field (see listField).
func socialPage(t *testing.T, s *gatewaytest.Server, userID, field, after string, first int) (ids []string, end string, next bool, total int) {
	t.Helper()
	vars := map[string]any{"id": userID, "first": first}
	if after != "" {
		vars["after"] = after
	}
	r := s.MustDo(t, "", `query($id: ID!, $first: Int, $after: String) { user(id: $id) { l: `+field+`first: $first, after: $after) {
		edges { cursor node { id } } pageInfo { hasNextPage endCursor } totalCount } } }`, vars)
	edges, _ := r.Get("user.l.edges").([]any)
	for i := range edges {
		ids = append(ids, r.Str(fmt.Sprintf("user.l.edges.%d.node.id", i)))
	}
	if n := len(edges); n > 0 && r.Str(fmt.Sprintf("user.l.edges.%d.cursor", n-1)) != r.Str("user.l.pageInfo.endCursor") {
		t.Errorf("endCursor is not the last edge's cursor")
	}
	return ids, r.Str("user.l.pageInfo.endCursor"), r.Get("user.l.pageInfo.hasNextPage") == true, r.Int("user.l.totalCount")
}

func TestUserListsThroughGraphQL(t *testing.T) {
	s := gatewaytest.New(t)
	star := s.Register(t, "star")
	fans := make([]gatewaytest.User, 7)
	for i := range fans {
		fans[i] = s.Register(t, "fan")
		mustSocial(t, s, fans[i].Token, "follow", star.ID)
	}
	// Ids grow with the follow order, so newest first is the reverse order
	// also for follows within one millisecond (ties order by id, descending).
	var want []string
	for i := len(fans) - 1; i >= 0; i-- {
		want = append(want, fans[i].ID)
	}

	t.Run("followers while others follow and unfollow", func(t *testing.T) {
		var got []string
		after := ""
		for page := 0; ; page++ {
			ids, end, next, total := socialPage(t, s, star.ID, listField("followers", ""), after, 2)
			got = append(got, ids...)
			if page == 0 && total != len(fans) {
				t.Errorf("totalCount %d, want %d", total, len(fans))
			}
			if !next {
				break
			}
			after = end
			// Between pages: the last follower shown leaves, a new one comes.
			mustSocial(t, s, s.Register(t, "late").Token, "follow", star.ID)
			last := slices.IndexFunc(fans, func(u gatewaytest.User) bool { return u.ID == ids[len(ids)-1] })
			mustSocial(t, s, fans[last].Token, "unfollow", star.ID)
		}
		if !slices.Equal(got, want) {
			t.Errorf("followers %v, want %v", got, want)
		}
	})

	t.Run("following and common following", func(t *testing.T) {
		a, b := s.Register(t, "a"), s.Register(t, "b")
		for _, f := range fans[:4] {
			mustSocial(t, s, a.Token, "follow", f.ID)
		}
		for _, f := range fans[2:] {
			mustSocial(t, s, b.Token, "follow", f.ID)
		}
		ids, _, next, total := socialPage(t, s, a.ID, listField("following", ""), "", 10)
		if w := []string{fans[3].ID, fans[2].ID, fans[1].ID, fans[0].ID}; !slices.Equal(ids, w) || next || total != 4 {
			t.Errorf("following %v (next %v, total %d), want %v", ids, next, total, w)
		}
		ids, end, next, total := socialPage(t, s, a.ID, listField("commonFollowing", b.ID), "", 1)
		if w := []string{fans[3].ID}; !slices.Equal(ids, w) || !next || total != 2 {
			t.Errorf("common following page 1: %v (next %v, total %d), want %v", ids, next, total, w)
		}
		ids, _, next, _ = socialPage(t, s, a.ID, listField("commonFollowing", b.ID), end, 1)
		if w := []string{fans[2].ID}; !slices.Equal(ids, w) || next {
			t.Errorf("common following page 2: %v (next %v), want %v", ids, next, w)
		}
		r := s.Do(t, "", `query($id: ID!) { user(id: $id) { commonFollowing(with: "999999") { totalCount } } }`, map[string]any{"id": a.ID})
		if r.Code() != "NOT_FOUND" {
			t.Errorf("common following with an unknown user: code %q", r.Code())
		}
	})
}

func TestUserListsBadPaging(t *testing.T) {
	s := gatewaytest.New(t)
	a, b := s.Register(t, "a"), s.Register(t, "b")
	for _, field := range []string{listField("followers", ""), listField("following", ""), listField("commonFollowing", b.ID)} {
		for _, c := range []struct {
			name  string
			first int
			after string
		}{
			{"first 0", 0, ""},
			{"first 101", 101, ""},
			{"first -1", -1, ""},
			{"malformed cursor", 10, "not-a-cursor"},
		} {
			t.Run(field+"/"+c.name, func(t *testing.T) {
				args := fmt.Sprintf("first: %d", c.first)
				if c.after != "" {
					args += fmt.Sprintf(", after: %q", c.after)
				}
				r := s.Do(t, "", `query($id: ID!) { user(id: $id) { `+field+args+`) { totalCount } } }`, map[string]any{"id": a.ID})
				if r.Code() != "BAD_USER_INPUT" {
					t.Fatalf("code %q, want BAD_USER_INPUT: %+v", r.Code(), r.Errors)
				}
			})
		}
	}
}

// TestUserFollows: User.follows answers for any two users, as the viewer
// may see them: false for a user who does not follow, an unknown or
// malformed id, and across a block of the viewer by the user asked about
// (whose circle is then hidden from the viewer).
func TestUserFollows(t *testing.T) {
	s := gatewaytest.New(t)
	ctx := context.Background()
	a, b, c, viewer := s.Register(t, "fa"), s.Register(t, "fb"), s.Register(t, "fc"), s.Register(t, "fv")
	if err := s.Store.Follow(ctx, a.ID, b.ID); err != nil {
		t.Fatal(err)
	}
	doc := `query($u: ID!, $b: ID!, $c: ID!) { user(id: $u) { yes: follows(userId: $b) no: follows(userId: $c)
	  unknown: follows(userId: "999999") malformed: follows(userId: "x") } }`
	vars := map[string]any{"u": a.ID, "b": b.ID, "c": c.ID}
	want := func(token, label string, yes bool) {
		t.Helper()
		r := s.MustDo(t, token, doc, vars)
		if r.Get("user.yes") != yes || r.Get("user.no") != false || r.Get("user.unknown") != false || r.Get("user.malformed") != false {
			t.Errorf("%s: %+v", label, r.Get("user"))
		}
	}
	want(viewer.Token, "signed in", true)
	want("", "anonymous", true)
	want(b.Token, "the followee", true)
	s.MustDo(t, a.Token, `mutation($u: ID!) { block(userId: $u) { id } }`, map[string]any{"u": viewer.ID})
	want(viewer.Token, "blocked by the user asked about", false)
	want(a.Token, "the user themself", true)
}
