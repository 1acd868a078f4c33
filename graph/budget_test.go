package graph_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/ratelimit"
)

// limited starts a gateway with the given budgets.
func limited(t *testing.T, limits map[string]ratelimit.Limit) *gatewaytest.Server {
	t.Helper()
	return gatewaytest.New(t, gatewaytest.Options{Abuse: &gateway.Abuse{RateLimits: limits}})
}

// TestLoginBudget: after a login's budget of attempts even the right
// password is refused; a name and an e-mail address have a budget each,
// so the answer for one tells nothing of which account the other is
// (the e-mail of a hammered name answers as an unrelated address does);
// the address budget stops one client guessing across accounts.
func TestLoginBudget(t *testing.T) {
	s := limited(t, map[string]ratelimit.Limit{
		auth.RuleLoginAccount: {Count: 3, Per: time.Hour},
		auth.RuleLoginIP:      {Count: 8, Per: time.Hour},
	})
	victim, other := s.Register(t, "victim"), s.Register(t, "bystander")
	for range 3 {
		wantCode(t, s.Do(t, "", authLoginDoc, loginVars(victim.Name, "wrong password")), "UNAUTHENTICATED")
	}
	wantCode(t, s.Do(t, "", authLoginDoc, loginVars(victim.Name, gatewaytest.Password)), "RATE_LIMITED")
	wantCode(t, s.Do(t, "", authLoginDoc, loginVars(victim.Name+"@example.com", "wrong password")), "UNAUTHENTICATED")
	wantCode(t, s.Do(t, "", authLoginDoc, loginVars("unrelated@example.com", "wrong password")), "UNAUTHENTICATED")
	if r := s.Do(t, "", authLoginDoc, loginVars(victim.Name+"@example.com", gatewaytest.Password)); r.Str("login.user.id") != victim.ID {
		t.Fatalf("the owner by e-mail: %+v", r)
	}
	// Another account still logs in, until the address budget (8) is spent.
	if r := s.Do(t, "", authLoginDoc, loginVars(other.Name, gatewaytest.Password)); r.Str("login.user.id") != other.ID {
		t.Fatalf("other account: %+v", r)
	}
	wantCode(t, s.Do(t, "", authLoginDoc, loginVars(other.Name, gatewaytest.Password)), "RATE_LIMITED")
}

// TestRegisterBudget: registrations per address.
func TestRegisterBudget(t *testing.T) {
	s := limited(t, map[string]ratelimit.Limit{auth.RuleRegisterIP: {Count: 2, Per: time.Hour}})
	for i := range 2 {
		n := fmt.Sprintf("reg_%d", i)
		s.MustDo(t, "", authRegisterDoc, registerVars(n, n+"@example.com", "password123"))
	}
	wantCode(t, s.Do(t, "", authRegisterDoc, registerVars("reg_2", "reg_2@example.com", "password123")), "RATE_LIMITED")
}

// TestBlocksHideCircleAndCounts: a user X blocked sees neither X's
// followers nor whom X follows, and postsCount reveals no post hidden from
// the viewer.
func TestBlocksHideCircleAndCounts(t *testing.T) {
	s := gatewaytest.New(t)
	x, blocked, fan, stranger := s.Register(t, "x"), s.Register(t, "blk"), s.Register(t, "fan"), s.Register(t, "stranger")
	s.MustDo(t, fan.Token, `mutation($u: ID!) { follow(userId: $u) { id } }`, map[string]any{"u": x.ID})
	s.MustDo(t, x.Token, `mutation($u: ID!) { follow(userId: $u) { id } }`, map[string]any{"u": fan.ID})
	s.MustDo(t, x.Token, engCreatePostDoc, map[string]any{"i": map[string]any{"content": "public"}})
	s.MustDo(t, x.Token, engCreatePostDoc, map[string]any{"i": map[string]any{"content": "for fan", "onlyTo": []string{fan.ID}}})
	s.MustDo(t, x.Token, engCreatePostDoc, map[string]any{"i": map[string]any{"content": "not for stranger", "notTo": []string{stranger.ID}}})
	s.MustDo(t, x.Token, `mutation($u: ID!) { block(userId: $u) { id } }`, map[string]any{"u": blocked.ID})

	const q = `query($u: ID!) { user(id: $u) { postsCount followers { totalCount edges { node { id } } } following { totalCount edges { node { id } } } } }`
	tests := []struct {
		name                   string
		token                  string
		posts, followers, fols int
	}{
		{"the author", x.Token, 3, 1, 1},
		{"a stranger", stranger.Token, 1, 1, 1},
		{"anonymous", "", 1, 1, 1},
		{"a user the author blocked", blocked.Token, 0, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.MustDo(t, tt.token, q, map[string]any{"u": x.ID})
			got := []int{r.Int("user.postsCount"), r.Int("user.followers.totalCount"), r.Int("user.following.totalCount")}
			edges := []any{r.Get("user.followers.edges"), r.Get("user.following.edges")}
			if got[0] != tt.posts || got[1] != tt.followers || got[2] != tt.fols {
				t.Errorf("postsCount, followers, following = %v, want %d, %d, %d", got, tt.posts, tt.followers, tt.fols)
			}
			for i, e := range edges {
				if n := len(e.([]any)); n != got[i+1] {
					t.Errorf("list %d has %d edges, total %d", i, n, got[i+1])
				}
			}
		})
	}
	// Deleting the public post lowers everyone's count.
	r := s.MustDo(t, x.Token, `query($u: ID!) { userTimeline(userId: $u, first: 5) { edges { node { id content } } } }`, map[string]any{"u": x.ID})
	for _, e := range r.Get("userTimeline.edges").([]any) {
		n := e.(map[string]any)["node"].(map[string]any)
		if n["content"] == "public" {
			s.MustDo(t, x.Token, `mutation($id: ID!) { deletePost(id: $id) }`, map[string]any{"id": n["id"]})
		}
	}
	if r := s.MustDo(t, stranger.Token, q, map[string]any{"u": x.ID}); r.Int("user.postsCount") != 0 {
		t.Errorf("postsCount after deleting the public post: %d", r.Int("user.postsCount"))
	}
}
