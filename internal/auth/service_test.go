package auth_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/social"
)

// memStore is an in-memory AccountStore and SessionStore; the Redis store
// has its own end-to-end tests in graph/.
type memStore struct {
	mu       sync.Mutex
	users    map[string]*social.User
	hashes   map[string]string // user id → PHC string
	logins   map[string]string // lower-cased name or e-mail → user id
	sessions map[string]*memSession
	denied   map[string]time.Time
	rotates  int
	fail     error // returned by Revoked when set
}

func newMemStore() *memStore {
	return &memStore{
		users: map[string]*social.User{}, hashes: map[string]string{}, logins: map[string]string{},
		sessions: map[string]*memSession{}, denied: map[string]time.Time{},
	}
}

func (m *memStore) CreateUser(_ context.Context, in social.NewAccount) (*social.User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name, email := strings.ToLower(in.Name), strings.ToLower(in.Email)
	if _, ok := m.logins[name]; ok {
		return nil, social.Errorf(social.Conflict, "name taken")
	}
	if _, ok := m.logins[email]; ok {
		return nil, social.Errorf(social.Conflict, "e-mail taken")
	}
	id := strconv.Itoa(len(m.users) + 1)
	u := &social.User{ID: id, Name: in.Name, Email: in.Email}
	m.users[id], m.hashes[id], m.logins[name], m.logins[email] = u, in.PasswordHash, id, id
	return u, nil
}

func (m *memStore) Credentials(_ context.Context, login string) (string, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.logins[strings.ToLower(login)]
	if !ok {
		return "", "", social.Errorf(social.NotFound, "no such account")
	}
	return id, m.hashes[id], nil
}

func (m *memStore) User(_ context.Context, id string) (*social.User, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if u, ok := m.users[id]; ok {
		return u, nil
	}
	return nil, social.Errorf(social.NotFound, "no user %s", id)
}

// memSession is a refresh-token family; the Redis store's rotation is
// tested against a real Redis in internal/redisstore.
type memSession struct {
	uid, cur, prev, key string
	old                 []string // hashes of the tokens rotated away from
	at                  time.Time
}

func (m *memStore) CreateSession(_ context.Context, family, userID, tokenHash, key string, _ time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sessions[family] = &memSession{uid: userID, cur: tokenHash, key: key}
	return nil
}

func (m *memStore) SessionKey(_ context.Context, family string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s, ok := m.sessions[family]
	if !ok {
		return "", social.Errorf(social.Unauthenticated, "invalid or expired refresh token")
	}
	return s.key, nil
}

func (m *memStore) RotateSession(_ context.Context, family, oldHash, newHash string, grace, _ time.Duration) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rotates++
	s, ok := m.sessions[family]
	switch {
	case !ok:
		return "", social.Errorf(social.Unauthenticated, "invalid or expired refresh token")
	case s.cur == oldHash:
		s.prev, s.cur, s.at, s.old = oldHash, newHash, time.Now(), append(s.old, oldHash)
		return s.uid, nil
	case s.prev == oldHash && s.cur == newHash && time.Since(s.at) <= grace:
		return s.uid, nil
	case !slices.Contains(s.old, oldHash):
		return "", social.Errorf(social.Unauthenticated, "invalid or expired refresh token")
	}
	delete(m.sessions, family)
	return "", social.ErrRefreshReused
}

func (m *memStore) RevokeSession(_ context.Context, family string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, family)
	return nil
}

func (m *memStore) DenyToken(_ context.Context, jti string, until time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.denied[jti] = until
	return nil
}

func (m *memStore) Revoked(_ context.Context, jti, family, userID string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return false, m.fail
	}
	_, denied := m.denied[jti]
	_, live := m.sessions[family]
	_, user := m.users[userID]
	return denied || !live || !user, nil
}

// newService returns a service over a memStore with one hashing slot.
func newService(t *testing.T) (*auth.Service, *memStore) {
	t.Helper()
	m := newMemStore()
	return &auth.Service{
		Accounts: m, Sessions: m, Tokens: newTokens(t, "HS256"), Passwords: auth.NewPasswords(1), RefreshTTL: time.Hour,
	}, m
}

// TestLoginFailuresLookAlike: an unknown login and a wrong password give
// the same error, and both run exactly one argon2id derivation, as a good
// login does, so neither the answer nor the work done tells them apart.
func TestLoginFailuresLookAlike(t *testing.T) {
	svc, _ := newService(t)
	ctx := context.Background()
	const pw = "correct horse battery"
	if _, err := svc.Register(ctx, "Alice", "alice@example.com", pw); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, login, password string
		ok                    bool
	}{
		{"good login by name", "alice", pw, true},
		{"good login by e-mail", "ALICE@example.com", pw, true},
		{"unknown name", "mallory", pw, false},
		{"unknown e-mail", "mallory@example.com", pw, false},
		{"wrong password by name", "Alice", pw + "!", false},
		{"wrong password by e-mail", "alice@example.com", "wrong password", false},
		{"unknown name, empty password", "nobody", "", false},
	}
	var firstErr error
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := svc.Passwords.Derivations()
			res, err := svc.Login(ctx, tt.login, tt.password)
			if n := svc.Passwords.Derivations() - before; n != 1 {
				t.Errorf("Login ran %d argon2id derivations, want 1", n)
			}
			if tt.ok {
				if err != nil || res.User.Name != "Alice" || res.AccessToken == "" || res.RefreshToken == "" {
					t.Fatalf("Login = %+v, %v", res, err)
				}
				return
			}
			if !social.IsCode(err, social.Unauthenticated) {
				t.Fatalf("err = %v, want UNAUTHENTICATED", err)
			}
			if firstErr == nil {
				firstErr = err
			}
			if err.Error() != firstErr.Error() || !errors.Is(err, firstErr) {
				t.Errorf("err = %q, want the same error as every failed login (%q)", err, firstErr)
			}
		})
	}
}

// TestRegisterValidates: bad input is refused before any hashing and
// leaves no account.
func TestRegisterValidates(t *testing.T) {
	tests := []struct {
		name, user, email, password string
		code                        social.Code
	}{
		{"ok", "bob_1", "bob@example.com", "password123", ""},
		{"e-mail with spaces around", "bob_2", "  bob2@example.com ", "password123", ""},
		{"short name", "bo", "bob@example.com", "password123", social.BadUserInput},
		{"bad name", "bob!", "bob@example.com", "password123", social.BadUserInput},
		{"bad e-mail", "bob_3", "bob at example.com", "password123", social.BadUserInput},
		{"short password", "bob_4", "bob4@example.com", "short", social.BadUserInput},
		{"long password", "bob_5", "bob5@example.com", strings.Repeat("x", 129), social.BadUserInput},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc, m := newService(t)
			before := svc.Passwords.Derivations()
			res, err := svc.Register(context.Background(), tt.user, tt.email, tt.password)
			if tt.code == "" {
				if err != nil {
					t.Fatalf("Register: %v", err)
				}
				if res.User.Email != strings.TrimSpace(tt.email) {
					t.Errorf("e-mail stored as %q", res.User.Email)
				}
				return
			}
			if !social.IsCode(err, tt.code) {
				t.Fatalf("err = %v, want %s", err, tt.code)
			}
			if n := svc.Passwords.Derivations() - before; n != 0 {
				t.Errorf("refused input ran %d derivations", n)
			}
			if len(m.users) != 0 {
				t.Errorf("refused input left %d accounts", len(m.users))
			}
		})
	}
}

func TestAuthenticate(t *testing.T) {
	ctx := context.Background()
	svc, m := newService(t)
	u, err := m.CreateUser(ctx, social.NewAccount{Name: "carol", Email: "carol@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	session := func(t *testing.T) *auth.Result {
		t.Helper()
		res, err := svc.StartSession(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	t.Run("valid", func(t *testing.T) {
		res := session(t)
		v, err := svc.Authenticate(ctx, res.AccessToken)
		if err != nil {
			t.Fatal(err)
		}
		fam := auth.SessionOf(res.RefreshToken)
		if v.UserID != u.ID || v.TokenID == "" || v.Session != fam || !v.ExpiresAt.Equal(res.ExpiresAt) {
			t.Errorf("viewer = %+v, result %+v", v, res)
		}
	})
	tests := []struct {
		name  string
		token func(t *testing.T) string
		code  social.Code
	}{
		{"garbage", func(*testing.T) string { return "garbage" }, social.Unauthenticated},
		{"logged out", func(t *testing.T) string {
			res := session(t)
			v, err := svc.Authenticate(ctx, res.AccessToken)
			if err != nil {
				t.Fatal(err)
			}
			if err := svc.Logout(ctx, v); err != nil {
				t.Fatal(err)
			}
			if until := m.denied[v.TokenID]; !until.Equal(v.ExpiresAt.Add(auth.Leeway)) {
				t.Errorf("denied until %v, want the token's expiry plus the leeway %v", until, v.ExpiresAt.Add(auth.Leeway))
			}
			return res.AccessToken
		}, social.Unauthenticated},
		{"session revoked", func(t *testing.T) string {
			res := session(t)
			fam := auth.SessionOf(res.RefreshToken)
			if err := m.RevokeSession(ctx, fam); err != nil {
				t.Fatal(err)
			}
			return res.AccessToken
		}, social.Unauthenticated},
		{"another server's token", func(t *testing.T) string {
			s, _, err := newTokens(t, "EdDSA").Issue(u.ID, "f")
			if err != nil {
				t.Fatal(err)
			}
			return s
		}, social.Unauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := svc.Authenticate(ctx, tt.token(t))
			if !social.IsCode(err, tt.code) || v.UserID != "" {
				t.Errorf("Authenticate = %+v, %v; want %s", v, err, tt.code)
			}
		})
	}

	t.Run("store down is internal, not anonymous", func(t *testing.T) {
		res := session(t)
		m.mu.Lock()
		m.fail = errors.New("redis: connection refused")
		m.mu.Unlock()
		defer func() { m.mu.Lock(); m.fail = nil; m.mu.Unlock() }()
		v, err := svc.Authenticate(ctx, res.AccessToken)
		if social.ErrorCode(err) != social.Internal || v.UserID != "" {
			t.Errorf("Authenticate = %+v, %v; want an internal error", v, err)
		}
	})
}

func TestRefresh(t *testing.T) {
	ctx := context.Background()
	svc, m := newService(t)
	u, _ := m.CreateUser(ctx, social.NewAccount{Name: "dave", Email: "dave@example.com"})
	first, err := svc.StartSession(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	second, err := svc.Refresh(ctx, first.RefreshToken)
	if err != nil {
		t.Fatalf("Refresh: %v", err)
	}
	famA := auth.SessionOf(first.RefreshToken)
	famB := auth.SessionOf(second.RefreshToken)
	if second.RefreshToken == first.RefreshToken || famA != famB || second.User.ID != u.ID {
		t.Errorf("rotation: %q → %q (user %s)", first.RefreshToken, second.RefreshToken, second.User.ID)
	}

	malformed := []struct{ name, token string }{
		{"empty", ""},
		{"no family", "abcdef"},
		{"empty family", ".abcdef"},
		{"too long", strings.Repeat("a", 200) + "." + strings.Repeat("b", 100)},
	}
	for _, tt := range malformed {
		t.Run(tt.name, func(t *testing.T) {
			before := m.rotates
			_, err := svc.Refresh(ctx, tt.token)
			if !social.IsCode(err, social.Unauthenticated) {
				t.Errorf("err = %v, want UNAUTHENTICATED", err)
			}
			if m.rotates != before {
				t.Errorf("a malformed token reached the store")
			}
		})
	}
}

func TestViewerFromHeader(t *testing.T) {
	ctx := context.Background()
	svc, m := newService(t)
	u, _ := m.CreateUser(ctx, social.NewAccount{Name: "erin", Email: "erin@example.com"})
	res, err := svc.StartSession(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	tok := res.AccessToken
	tests := []struct {
		name, header string
		viewer       string // user id, "" for anonymous
		code         social.Code
	}{
		{"no header", "", "", ""},
		{"blank header", "   ", "", ""},
		{"bearer", "Bearer " + tok, u.ID, ""},
		{"scheme in lower case", "bearer " + tok, u.ID, ""},
		{"extra spaces", "  Bearer   " + tok + "  ", u.ID, ""},
		{"bare token", tok, "", social.Unauthenticated},
		{"basic scheme", "Basic " + tok, "", social.Unauthenticated},
		{"bearer without token", "Bearer", "", social.Unauthenticated},
		{"bearer with blank token", "Bearer    ", "", social.Unauthenticated},
		{"bearer garbage", "Bearer garbage", "", social.Unauthenticated},
		{"bearer tampered", "Bearer " + tamperSignature(tok), "", social.Unauthenticated},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := auth.ViewerFromHeader(ctx, svc, tt.header)
			if social.ErrorCode(err) != tt.code {
				t.Fatalf("err = %v, want code %q", err, tt.code)
			}
			if id := social.ViewerID(got); id != tt.viewer {
				t.Errorf("viewer = %q, want %q", id, tt.viewer)
			}
		})
	}
}

// tamperSignature changes the first character of a token's signature.
func tamperSignature(tok string) string {
	i := strings.LastIndexByte(tok, '.') + 1
	c := byte('A')
	if tok[i] == c {
		c = 'B'
	}
	return tok[:i] + string(c) + tok[i+1:]
}

// TestEmailNormalization checks that look-alike spellings of one address
// are one address: a combining accent and a precomposed letter, full-width
// and ASCII letters.
func TestEmailNormalization(t *testing.T) {
	for in, want := range map[string]string{
		" Jose\u0301@example.com ":    "Jos\u00e9@example.com",
		"\uff41lice@example.com":      "alice@example.com",
		"alice@\uff45xample\uff0ecom": "alice@example.com",
	} {
		if got := auth.NormalizeLogin(in); got != want {
			t.Errorf("normalizeLogin(%q) = %q, want %q", in, got, want)
		}
	}
	svc, _ := newService(t)
	ctx := context.Background()
	if _, err := svc.Register(ctx, "alice", "alice@example.com", "password123"); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Register(ctx, "alice2", "\uff41lice@example.com", "password123"); !social.IsCode(err, social.Conflict) {
		t.Fatalf("full-width twin registered: %v, want CONFLICT", err)
	}
	if _, err := svc.Login(ctx, "\uff41lice@example.com", "password123"); err != nil {
		t.Fatalf("login with the full-width spelling: %v", err)
	}
}

// TestAccessTokenCannotEndSession: the sid an access token carries is not
// its refresh family, so its holder cannot forge "sid.anything", have it
// taken for a reused refresh token and so revoke the session.
func TestAccessTokenCannotEndSession(t *testing.T) {
	ctx := context.Background()
	svc, m := newService(t)
	u, _ := m.CreateUser(ctx, social.NewAccount{Name: "erin", Email: "erin@example.com"})
	res, err := svc.StartSession(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	v, err := svc.Authenticate(ctx, res.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	family, _, _ := strings.Cut(res.RefreshToken, ".")
	if v.Session == "" || v.Session == family {
		t.Fatalf("the access token's sid %q is the family %q", v.Session, family)
	}
	for _, forged := range []string{v.Session + ".forged", v.Session + "." + strings.Repeat("A", 43)} {
		if _, err := svc.Refresh(ctx, forged); !social.IsCode(err, social.Unauthenticated) || errors.Is(err, social.ErrRefreshReused) {
			t.Fatalf("forged %q: %v, want a plain UNAUTHENTICATED", forged, err)
		}
	}
	if _, err := svc.Authenticate(ctx, res.AccessToken); err != nil {
		t.Fatalf("the session ended: %v", err)
	}
	if _, err := svc.Refresh(ctx, res.RefreshToken); err != nil {
		t.Fatalf("the real refresh token: %v", err)
	}
}

// TestPasswordPrepared: a password is one password however its
// characters are composed (NFC/NFD) or its spaces typed.
func TestPasswordPrepared(t *testing.T) {
	ctx := context.Background()
	svc, _ := newService(t)
	if _, err := svc.Register(ctx, "zoe", "zoe@example.com", "caf\u00e9 au lait"); err != nil {
		t.Fatal(err)
	}
	for _, pw := range []string{"caf\u00e9 au lait", "cafe\u0301 au lait", "caf\u00e9\u00a0au lait"} {
		if _, err := svc.Login(ctx, "zoe", pw); err != nil {
			t.Errorf("login with %q: %v", pw, err)
		}
	}
	if _, err := svc.Login(ctx, "zoe", "cafe au lait"); err == nil {
		t.Error("a different password logged in")
	}
}
