package redisstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// mailUsers registers n users, user<i>@example.com, on a fresh store.
func mailUsers(t *testing.T, n int) (*redisstore.Store, *redisstore.MailService, []string) {
	t.Helper()
	s := redisstore.New(redistest.Client(t), redistest.Prefix(t))
	var ids []string
	for i := range n {
		name := string(rune('a'+i)) + "user"
		u, err := s.CreateUser(context.Background(), social.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: "pw0"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, u.ID)
	}
	return s, redisstore.NewMailService(s.DB), ids
}

// A reserved address is taken for registrations and other changes, and
// leads no login to the account until it is claimed; claim and release
// then move it; an expired reservation is freed by the sweep.
func TestEmailReservations(t *testing.T) {
	ctx := context.Background()
	s, m, ids := mailUsers(t, 2)
	a, b := ids[0], ids[1]
	now := time.Now()
	reserve := func(uid, email string, want social.Code) {
		t.Helper()
		if err := m.ReserveEmail(ctx, uid, email, now.Add(time.Hour)); social.ErrorCode(err) != want {
			t.Fatalf("reserve %s for %s: %v, want %q", email, uid, err, want)
		}
	}
	reserve(a, "New@Example.com", "")
	reserve(a, "new@example.com", "") // again: the same reservation
	reserve(b, "NEW@example.com", social.Conflict)
	reserve(b, "auser@example.com", social.Conflict) // a's address
	reserve(a, "auser@example.com", social.BadUserInput)
	if _, err := s.CreateUser(ctx, social.NewAccount{Name: "cuser", Email: "new@example.com", PasswordHash: "x"}); !social.IsCode(err, social.Conflict) {
		t.Fatalf("registration with a reserved address: %v, want CONFLICT", err)
	}
	if _, _, err := s.Credentials(ctx, "new@example.com"); !social.IsCode(err, social.NotFound) {
		t.Fatalf("login by a reserved address: %v, want NOT_FOUND", err)
	}
	if _, err := m.UserIDByEmail(ctx, "new@example.com"); !social.IsCode(err, social.NotFound) {
		t.Fatalf("a reserved address resolves to an account: %v", err)
	}

	// A second change of a's ends the first reservation.
	reserve(a, "other@example.com", "")
	reserve(b, "new@example.com", "")

	// Claim, then release the old address: a login by the new one works.
	if ok, err := m.ClaimEmail(ctx, a, "other@example.com"); !ok || err != nil {
		t.Fatalf("claim: %v %v", ok, err)
	}
	if ok, err := m.ClaimEmail(ctx, b, "other@example.com"); ok || err != nil {
		t.Fatalf("b claimed a's address: %v %v", ok, err)
	}
	if err := m.ReleaseEmail(ctx, a, "auser@example.com"); err != nil {
		t.Fatal(err)
	}
	if id, _, err := s.Credentials(ctx, "other@example.com"); err != nil || id != a {
		t.Fatalf("login by the new address: %q %v", id, err)
	}
	if _, _, err := s.Credentials(ctx, "auser@example.com"); !social.IsCode(err, social.NotFound) {
		t.Fatalf("the old address still logs in: %v", err)
	}

	// b's reservation expires: the sweep frees it, and only it.
	n, err := m.SweepEmailReservations(ctx, now.Add(30*time.Minute), 10)
	if err != nil || n != 0 {
		t.Fatalf("sweep before expiry freed %d: %v", n, err)
	}
	n, err = m.SweepEmailReservations(ctx, now.Add(2*time.Hour), 10)
	if err != nil || n != 1 {
		t.Fatalf("sweep after expiry freed %d, want 1: %v", n, err)
	}
	if _, err := s.CreateUser(ctx, social.NewAccount{Name: "duser", Email: "new@example.com", PasswordHash: "x"}); err != nil {
		t.Fatalf("registration with a freed address: %v", err)
	}
}

// A reset token works once, before it expires, and only with its hash.
func TestResetPasswordToken(t *testing.T) {
	ctx := context.Background()
	s, m, ids := mailUsers(t, 1)
	a := ids[0]
	now := time.Now()
	save := func(hash string) {
		t.Helper()
		if err := m.SaveMailToken(ctx, social.TokenReset, a, social.MailToken{Hash: hash, Email: "auser@example.com", Expires: now.Add(30 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	save("h1")
	save("h2") // replaces h1
	for _, tc := range []struct {
		name, hash string
		at         time.Time
		ok         bool
		pw         string
	}{
		{"replaced token", "h1", now, false, "pw0"},
		{"forged token", "hx", now, false, "pw0"},
		{"expired", "h2", now.Add(31 * time.Minute), false, "pw0"},
		{"valid", "h2", now, true, "pw1"},
		{"used", "h2", now, false, "pw1"},
	} {
		ok, err := m.ResetPassword(ctx, a, tc.hash, "pw1", tc.at)
		if err != nil || ok != tc.ok {
			t.Fatalf("%s: %v %v, want %v", tc.name, ok, err, tc.ok)
		}
		if _, pw, _ := s.Credentials(ctx, "auser"); pw != tc.pw {
			t.Fatalf("%s: password hash %q, want %q", tc.name, pw, tc.pw)
		}
	}
	if _, ok, err := m.MailToken(ctx, social.TokenReset, a); ok || err != nil {
		t.Fatalf("the used token is still stored: %v %v", ok, err)
	}
}

// A confirmation token works once, for the address it was mailed to, and
// marks the profile's address verified.
func TestConfirmEmailToken(t *testing.T) {
	ctx := context.Background()
	s, m, ids := mailUsers(t, 1)
	a := ids[0]
	now := time.Now()
	if err := m.SaveMailToken(ctx, social.TokenVerify, a, social.MailToken{Hash: "h", Email: "New@example.com", Expires: now.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := m.ConfirmEmail(ctx, a, "h", "evil@example.com", now); ok {
		t.Fatal("the token confirmed another address")
	}
	old, ok, err := m.ConfirmEmail(ctx, a, "h", "New@example.com", now)
	if err != nil || !ok || old != "auser@example.com" {
		t.Fatalf("confirm: %q %v %v", old, ok, err)
	}
	u, err := s.User(ctx, a)
	if err != nil || u.Email != "New@example.com" || !u.EmailVerified {
		t.Fatalf("profile after confirmation: %+v %v", u, err)
	}
	if _, ok, _ := m.ConfirmEmail(ctx, a, "h", "New@example.com", now); ok {
		t.Fatal("the token worked twice")
	}
}

// RevokeUserSessions ends every session of the user but the one kept,
// and no other user's; entries of expired sessions are pruned.
func TestRevokeUserSessions(t *testing.T) {
	ctx := context.Background()
	s, _, ids := mailUsers(t, 2)
	a, b := ids[0], ids[1]
	for _, sess := range []struct{ id, user string }{{"s1", a}, {"s2", a}, {"s3", a}, {"s4", b}} {
		if err := s.CreateSession(ctx, sess.id, sess.user, "hash", "key", time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RevokeSession(ctx, "s3"); err != nil { // a logout
		t.Fatal(err)
	}
	if err := s.RevokeUserSessions(ctx, a, "s2"); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		id   string
		live bool
	}{{"s1", false}, {"s2", true}, {"s3", false}, {"s4", true}} {
		_, err := s.SessionKey(ctx, tc.id)
		if live := err == nil; live != tc.live {
			t.Errorf("session %s live %v, want %v (%v)", tc.id, live, tc.live, err)
		}
	}
	if n := s.Client().SCard(ctx, s.Keys().UserSessions(a)).Val(); n != 1 {
		t.Errorf("a's index holds %d sessions, want 1", n)
	}
	if err := s.RetireSession(ctx, "s2", time.Minute); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RotateSession(ctx, "s2", "hash", "next", 0, time.Hour); err == nil {
		t.Fatal("a retired session's refresh token still rotates")
	}
	if revoked, err := s.Revoked(ctx, "jti", "s2", a); err != nil || revoked {
		t.Fatalf("a retired session's access tokens: revoked %v %v", revoked, err)
	}
	if ttl := s.Client().PTTL(ctx, s.Keys().Session("s2")).Val(); ttl > time.Minute || ttl <= 0 {
		t.Fatalf("retired session lives %v more, want at most a minute", ttl)
	}
}
