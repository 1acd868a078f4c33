package graph_test

import (
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestRegisterAndMe(t *testing.T) {
	s := gatewaytest.New(t)
	r := s.MustDo(t, "", `mutation($i: RegisterInput!) { register(input: $i) { accessToken refreshToken expiresAt user { id name email } } }`,
		map[string]any{"i": map[string]any{"name": "Alice_1", "email": "alice@example.com", "password": "password123"}})
	tok := r.Str("register.accessToken")
	if tok == "" || r.Str("register.user.email") != "alice@example.com" {
		t.Fatalf("register payload: %+v", r.Data)
	}
	me := s.MustDo(t, tok, `{ me { name email } }`, nil)
	if me.Str("me.name") != "Alice_1" || me.Str("me.email") != "alice@example.com" {
		t.Fatalf("me: %+v", me.Data)
	}
	other := s.MustDo(t, "", `{ user(name: "alice_1") { name email } }`, nil)
	if other.Str("user.name") != "Alice_1" || other.Get("user.email") != nil {
		t.Fatalf("anonymous view of alice: %+v", other.Data)
	}
}
