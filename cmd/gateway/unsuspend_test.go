package main

import (
	"context"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// TestUnsuspendCommand runs `gateway unsuspend` against a suspended
// account of a test database, and with bad arguments.
func TestUnsuspendCommand(t *testing.T) {
	ctx := context.Background()
	prefix := redistest.Prefix(t)
	store := redisstore.New(redistest.Client(t), prefix)
	u, err := store.CreateUser(ctx, social.NewAccount{Name: "suspect", Email: "suspect@example.com", PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	mod := gateway.NewModeration(store, nil, gateway.ModerationConfig{Log: redistest.Logger(t)})
	if err := mod.Suspend(ctx, u.ID); err != nil {
		t.Fatal(err)
	}
	suspended := func() bool {
		t.Helper()
		got, err := store.AccountService.User(ctx, u.ID)
		if err != nil {
			t.Fatal(err)
		}
		shown, _ := store.Users(ctx, []string{u.ID})
		if got.Suspended != (shown[0] == nil) {
			t.Fatalf("the flag says %v, reads show %v", got.Suspended, shown[0])
		}
		return got.Suspended
	}
	if !suspended() {
		t.Fatal("not suspended to begin with")
	}
	env := redistest.WithEnv(t, map[string]string{"REDIS_PREFIX": prefix, "LOG_FORMAT": "json"})
	cases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"no user", []string{"unsuspend"}, "--user"},
		{"an unknown user", []string{"unsuspend", "--user", "nobody"}, "not found"},
		{"a stray argument", []string{"unsuspend", "--user", "suspect", "extra"}, "unexpected arguments"},
		{"lift", []string{"unsuspend", "--user", "SUSPECT", "--by", "ops"}, ""},
		{"lift again", []string{"unsuspend", "--user", "suspect"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out syncBuffer
			err := command(ctx, c.args, mapEnv(env), &out)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one naming %q\n%s", err, c.wantErr, out.String())
				}
				if !suspended() {
					t.Error("a refused unsuspend lifted the suspension")
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			if suspended() {
				t.Error("still suspended")
			}
			s := out.String()
			if !strings.Contains(s, `"msg":"moderation"`) || !strings.Contains(s, `"action":"UNSUSPEND"`) ||
				!strings.Contains(s, `"target":"`+u.ID+`"`) || !strings.Contains(s, "unsuspended suspect") {
				t.Errorf("output lacks the log line or the answer:\n%s", s)
			}
			if c.name == "lift" && !strings.Contains(s, `"moderator":"ops"`) {
				t.Errorf("the log line does not name the operator:\n%s", s)
			}
		})
	}
}
