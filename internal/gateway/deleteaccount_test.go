package gateway_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/httpapi"
)

const mDelete = `mutation($p: String!) { deleteAccount(password: $p) }`

// TestDeleteAccount: a wrong password changes nothing; the right one
// ends the account at once for everyone (its sockets close, its token
// and login stop working, user(id) and its posts read null), and once
// the fan-out workers have purged it, its name registers again.
func TestDeleteAccount(t *testing.T) {
	s := gatewaytest.New(t, gatewaytest.Options{Sockets: &httpapi.SocketLimits{RecheckAuth: 200 * time.Millisecond}})
	f := gatewaytest.NewFanout(t, s)
	a, b := s.Register(t, "doomed"), s.Register(t, "witness")
	post := s.MustDo(t, a.Token, `mutation { createPost(input: {content: "last words"}) { id } }`, nil).Str("createPost.id")
	s.MustDo(t, b.Token, `mutation($u: ID!) { follow(userId: $u) { id } }`, map[string]any{"u": a.ID})
	f.Drain(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	socket := openSocket(ctx, t, s, a.Token)

	s.Do(t, a.Token, mDelete, map[string]any{"p": "wrong password"}).WantCode(t, "BAD_USER_INPUT")
	s.MustDo(t, a.Token, `{ me { id } }`, nil)
	if r := s.MustDo(t, b.Token, `query($p: ID!) { post(id: $p) { id } }`, map[string]any{"p": post}); r.Get("post") == nil {
		t.Fatal("a wrong password deleted the account")
	}

	if r := s.MustDo(t, a.Token, mDelete, map[string]any{"p": gatewaytest.Password}); r.Get("deleteAccount") != true {
		t.Fatalf("deleteAccount: %v", r.Get("deleteAccount"))
	}
	_, err := gatewaytest.WSNext(ctx, socket)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 4401 {
		t.Fatalf("the account's socket: %v, want close 4401", err)
	}
	if status, _ := gatewaytest.PostRaw(t, s.URL, a.Token, `{ me { id } }`, nil); status != 401 {
		t.Fatalf("the deleted account's token answers %d, want 401", status)
	}
	if r := s.Do(t, "", mLogin, map[string]any{"l": a.Name, "p": gatewaytest.Password}); len(r.Errors) == 0 {
		t.Fatal("the deleted account logs in")
	}
	r := s.MustDo(t, b.Token, `query($u: ID!, $p: ID!) { user(id: $u) { id } post(id: $p) { id } timeline(first: 10) { edges { node { id } } } }`,
		map[string]any{"u": a.ID, "p": post})
	if r.Get("user") != nil || r.Get("post") != nil {
		t.Fatalf("after delete: user %v, post %v", r.Get("user"), r.Get("post"))
	}
	if edges, _ := r.Get("timeline.edges").([]any); len(edges) != 0 {
		t.Fatalf("b's timeline still shows %v", edges)
	}
	s.Do(t, "", mRegister, map[string]any{"n": a.Name, "e": "someone.else@example.com", "p": pw1}).WantCode(t, "CONFLICT")

	f.Drain(t)
	f.Drain(t)
	s.MustDo(t, "", mRegister, map[string]any{"n": a.Name, "e": "someone.else@example.com", "p": pw1})
}
