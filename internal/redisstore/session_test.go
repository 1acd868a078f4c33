package redisstore_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/reqlog"
	"github.com/socialgw/gateway/internal/social"
)

// sessionService returns an auth service over a fresh store prefix with
// one registered user.
func sessionService(t *testing.T, grace time.Duration) (*auth.Service, *redisstore.Store, *social.User) {
	t.Helper()
	store := redisstore.New(redistest.Client(t), redistest.Prefix(t))
	tokens, err := auth.NewTokens(auth.TokenOptions{
		Secret: []byte(strings.Repeat("s", auth.MinSecretLen)), Issuer: "i", Audience: "a", TTL: time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	svc := &auth.Service{Accounts: store, Sessions: store, Tokens: tokens, Passwords: auth.NewPasswords(1),
		RefreshTTL: time.Hour, RefreshGrace: grace}
	u, err := store.CreateUser(context.Background(), social.NewAccount{Name: "sess", Email: "sess@example.com", PasswordHash: "x"})
	if err != nil {
		t.Fatal(err)
	}
	return svc, store, u
}

// TestRefreshGrace: the same refresh token presented concurrently or again
// within the grace window yields the same successor and revokes nothing;
// after the window it revokes the family, and the error says so. The
// window runs on Redis's clock, so the test moves it by backdating the
// rotation the family records.
func TestRefreshGrace(t *testing.T) {
	ctx := context.Background()
	const grace = time.Minute
	svc, store, u := sessionService(t, grace)
	first, err := svc.StartSession(ctx, u)
	if err != nil {
		t.Fatal(err)
	}

	// Two tabs at once.
	var wg sync.WaitGroup
	results := make([]*auth.Result, 8)
	errs := make([]error, len(results))
	for i := range results {
		wg.Go(func() { results[i], errs[i] = svc.Refresh(ctx, first.RefreshToken) })
	}
	wg.Wait()
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("refresh %d within the grace window: %v", i, errs[i])
		}
		if r.RefreshToken != results[0].RefreshToken {
			t.Fatalf("refresh %d got another successor: %q, %q", i, r.RefreshToken, results[0].RefreshToken)
		}
	}
	next := results[0].RefreshToken
	if next == first.RefreshToken {
		t.Fatal("the successor is the old token")
	}
	// Every access token issued in the window works: nothing was revoked.
	for _, r := range results {
		if _, err := svc.Authenticate(ctx, r.AccessToken); err != nil {
			t.Fatalf("access token from the window: %v", err)
		}
	}

	// The successor rotates normally; its predecessor, now two steps old,
	// is reuse even inside the window.
	third, err := svc.Refresh(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Refresh(ctx, first.RefreshToken); !social.IsCode(err, social.Unauthenticated) || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("two-step-old token: %v, want UNAUTHENTICATED saying the session was revoked", err)
	}
	if _, err := svc.Refresh(ctx, third.RefreshToken); !social.IsCode(err, social.Unauthenticated) {
		t.Fatalf("the family survived reuse: %v", err)
	}
	if _, err := svc.Authenticate(ctx, third.AccessToken); !social.IsCode(err, social.Unauthenticated) {
		t.Fatalf("access token of a revoked family: %v", err)
	}

	// After the window the previous token is reuse.
	s2, err := svc.StartSession(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	n2, err := svc.Refresh(ctx, s2.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	v, err := svc.Authenticate(ctx, n2.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Client().HIncrBy(ctx, store.Keys().Session(v.Session), "at", -grace.Milliseconds()).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Refresh(ctx, s2.RefreshToken); !social.IsCode(err, social.Unauthenticated) || !strings.Contains(err.Error(), "revoked") {
		t.Fatalf("reuse after the window: %v, want UNAUTHENTICATED saying the session was revoked", err)
	}
	if _, err := svc.Refresh(ctx, n2.RefreshToken); !social.IsCode(err, social.Unauthenticated) {
		t.Fatalf("successor survived reuse after the window: %v", err)
	}
}

// TestRefreshSuccessorIsSecret: two families derive different successors
// from their tokens, since each derives them with a key of its own.
func TestRefreshSuccessorIsSecret(t *testing.T) {
	ctx := context.Background()
	svc, _, u := sessionService(t, time.Minute)
	a, err := svc.StartSession(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	b, err := svc.StartSession(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := svc.Refresh(ctx, a.RefreshToken)
	rb, _ := svc.Refresh(ctx, b.RefreshToken)
	if ra == nil || rb == nil || secretOf(ra.RefreshToken) == secretOf(rb.RefreshToken) {
		t.Fatal("two families derived the same successor secret")
	}
}

func familyOf(refresh string) string { f, _, _ := strings.Cut(refresh, "."); return f }
func secretOf(refresh string) string { _, s, _ := strings.Cut(refresh, "."); return s }

// TestRefreshReuse: only a secret the family issued and rotated away from
// (the previous one, or an earlier generation it remembers) is reuse: it
// revokes the family and logs the theft warning. A secret it never issued
// (forged from the family's name, or another family's) is UNAUTHENTICATED,
// changes nothing in Redis, logs nothing, and the session works on.
func TestRefreshReuse(t *testing.T) {
	const (
		rotates = "rotates"
		reused  = "reused"
		unknown = "unknown"
	)
	g := redisstore.SessionGenerations
	tests := []struct {
		name      string
		rotations int
		// present picks the token to present from the family's tokens,
		// oldest first, and another family's current token.
		present func(chain []string, other string) string
		want    string
	}{
		{"current secret", 3, func(c []string, _ string) string { return c[3] }, rotates},
		{"previous secret", 3, func(c []string, _ string) string { return c[2] }, reused},
		{"secret five generations back", 6, func(c []string, _ string) string { return c[1] }, reused},
		{"oldest generation kept", g + 1, func(c []string, _ string) string { return c[1] }, reused},
		{"generation older than those kept", g + 1, func(c []string, _ string) string { return c[0] }, unknown},
		{"forged secret", 3, func(c []string, _ string) string { return familyOf(c[0]) + "." + strings.Repeat("A", 43) }, unknown},
		{"forged secret, never rotated", 0, func(c []string, _ string) string { return familyOf(c[0]) + ".forged" }, unknown},
		{"secret of another family", 3, func(c []string, o string) string { return familyOf(c[0]) + "." + secretOf(o) }, unknown},
	}
	rdb := redistest.Client(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log bytes.Buffer
			ctx := reqlog.WithLogger(context.Background(), slog.New(slog.NewTextHandler(&log, nil)))
			svc, store, u := sessionService(t, 0)
			chain := refreshChain(t, svc, u, tt.rotations)
			other := refreshChain(t, svc, u, 1)
			last, otherLast := chain[len(chain)-1], other[len(other)-1]
			tokens := make([]string, len(chain))
			for i, r := range chain {
				tokens[i] = r.RefreshToken
			}
			key := store.Keys().Session(auth.SessionOf(last.RefreshToken))
			before := rdb.HGetAll(ctx, key).Val()

			got, err := svc.Refresh(ctx, tt.present(tokens, otherLast.RefreshToken))
			warned := strings.Contains(log.String(), "refresh token reused")
			switch tt.want {
			case rotates:
				if err != nil {
					t.Fatalf("refresh: %v", err)
				}
				if _, err := svc.Refresh(ctx, got.RefreshToken); err != nil {
					t.Fatalf("the successor does not rotate: %v", err)
				}
			case reused:
				if !errors.Is(err, social.ErrRefreshReused) {
					t.Fatalf("refresh: %v, want the session revoked", err)
				}
				if n := rdb.Exists(ctx, key).Val(); n != 0 {
					t.Error("the family survived reuse")
				}
				if _, err := svc.Refresh(ctx, last.RefreshToken); !social.IsCode(err, social.Unauthenticated) {
					t.Errorf("the newest token after reuse: %v", err)
				}
				if _, err := svc.Authenticate(ctx, last.AccessToken); !social.IsCode(err, social.Unauthenticated) {
					t.Errorf("the newest access token after reuse: %v", err)
				}
			case unknown:
				if !social.IsCode(err, social.Unauthenticated) || errors.Is(err, social.ErrRefreshReused) {
					t.Fatalf("refresh: %v, want a plain UNAUTHENTICATED", err)
				}
				if after := rdb.HGetAll(ctx, key).Val(); !maps.Equal(before, after) {
					t.Errorf("an unknown secret changed the session:\n%v\n%v", before, after)
				}
				if _, err := svc.Authenticate(ctx, last.AccessToken); err != nil {
					t.Errorf("the access token after an unknown secret: %v", err)
				}
				if _, err := svc.Refresh(ctx, last.RefreshToken); err != nil {
					t.Errorf("the current token after an unknown secret: %v", err)
				}
			}
			if warned != (tt.want == reused) {
				t.Errorf("theft warning logged: %v, want %v (log: %q)", warned, tt.want == reused, log.String())
			}
			if _, err := svc.Refresh(ctx, otherLast.RefreshToken); err != nil {
				t.Errorf("the other family: %v", err)
			}
		})
	}
}

// refreshChain opens a session for u and refreshes it n times: the
// results, oldest first.
func refreshChain(t *testing.T, svc *auth.Service, u *social.User, n int) []*auth.Result {
	t.Helper()
	ctx := context.Background()
	r, err := svc.StartSession(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	chain := []*auth.Result{r}
	for range n {
		if r, err = svc.Refresh(ctx, r.RefreshToken); err != nil {
			t.Fatal(err)
		}
		chain = append(chain, r)
	}
	return chain
}

// TestTokenOfMissingUser: an access token whose user no longer exists
// (deleted, or lost with the data) authenticates nobody, and its refresh
// token ends the session.
func TestTokenOfMissingUser(t *testing.T) {
	ctx := context.Background()
	svc, store, u := sessionService(t, time.Minute)
	res, err := svc.StartSession(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, res.AccessToken); err != nil {
		t.Fatal(err)
	}
	rdb := redistest.Client(t)
	if err := rdb.Del(ctx, store.Keys().User(u.ID)).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Authenticate(ctx, res.AccessToken); !social.IsCode(err, social.Unauthenticated) {
		t.Fatalf("token of a missing user: %v, want UNAUTHENTICATED", err)
	}
	if _, err := svc.Refresh(ctx, res.RefreshToken); !social.IsCode(err, social.Unauthenticated) {
		t.Fatalf("refresh of a missing user: %v, want UNAUTHENTICATED", err)
	}
	if n, _ := rdb.Exists(ctx, store.Keys().Session(strings.SplitN(res.RefreshToken, ".", 2)[0])).Result(); n != 0 {
		t.Error("the session of a missing user survived its refresh")
	}
}
