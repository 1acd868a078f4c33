package redisstore_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
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
	u, err := store.CreateUser(context.Background(), auth.NewAccount{Name: "sess", Email: "sess@example.com", PasswordHash: "x"})
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

// TestRefreshSuccessorIsSecret: a forged token of a live family (right
// family id, wrong secret) revokes it, and the successor is not derivable
// without the family key, which only Redis holds.
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
	if ra == nil || rb == nil || ra.RefreshToken[strings.IndexByte(ra.RefreshToken, '.'):] == rb.RefreshToken[strings.IndexByte(rb.RefreshToken, '.'):] {
		t.Fatal("two families derived the same successor secret")
	}
	family, _, _ := strings.Cut(a.RefreshToken, ".")
	if _, err := svc.Refresh(ctx, family+".forged"); !social.IsCode(err, social.Unauthenticated) {
		t.Fatalf("forged token: %v", err)
	}
	if _, err := svc.Refresh(ctx, ra.RefreshToken); !social.IsCode(err, social.Unauthenticated) {
		t.Fatalf("family survived a forged token: %v", err)
	}
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
