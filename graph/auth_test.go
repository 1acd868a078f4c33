package graph_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redistest"
)

// Documents of the account API.
const (
	authPayloadFields = `accessToken refreshToken expiresAt user { id name email }`
	authRegisterDoc   = `mutation($i: RegisterInput!) { register(input: $i) { ` + authPayloadFields + ` } }`
	authLoginDoc      = `mutation($i: LoginInput!) { login(input: $i) { ` + authPayloadFields + ` } }`
	authRefreshDoc    = `mutation($t: String!) { refreshToken(refreshToken: $t) { ` + authPayloadFields + ` } }`
	authLogoutDoc     = `mutation { logout }`
	authMeDoc         = `{ me { id name email } }`
)

func registerVars(name, email, password string) map[string]any {
	return map[string]any{"i": map[string]any{"name": name, "email": email, "password": password}}
}

func loginVars(login, password string) map[string]any {
	return map[string]any{"i": map[string]any{"login": login, "password": password}}
}

// authRefresh runs refreshToken and returns the response.
func authRefresh(t *testing.T, s *gatewaytest.Server, refresh string) *gatewaytest.Response {
	t.Helper()
	return s.Do(t, "", authRefreshDoc, map[string]any{"t": refresh})
}

// wantUnauthenticated checks that a request with a token was refused as a
// whole: HTTP 401, UNAUTHENTICATED, and no data (never run anonymously).
func wantUnauthenticated(t *testing.T, r *gatewaytest.Response) {
	t.Helper()
	if r.Status != http.StatusUnauthorized || r.Code() != "UNAUTHENTICATED" || r.Data != nil {
		t.Errorf("got status %d, code %q, data %v; want 401 UNAUTHENTICATED without data", r.Status, r.Code(), r.Data)
	}
}

// wantCode checks the extensions.code of the first error.
func wantCode(t *testing.T, r *gatewaytest.Response, code string) {
	t.Helper()
	if r.Code() != code {
		t.Errorf("code = %q (errors %+v), want %s", r.Code(), r.Errors, code)
	}
}

// TestAccountLifecycle walks one account through the whole API: register,
// me, login by name and by e-mail, refresh, updateProfile, logout.
func TestAccountLifecycle(t *testing.T) {
	s := gatewaytest.New(t)
	const pw = "password123"
	start := time.Now()
	reg := s.MustDo(t, "", authRegisterDoc, registerVars("Erin_Life", "Erin.Life@Example.com", pw))
	id := reg.Str("register.user.id")
	if id == "" || reg.Str("register.user.name") != "Erin_Life" || reg.Str("register.user.email") != "Erin.Life@Example.com" {
		t.Fatalf("register payload: %+v", reg.Data)
	}
	exp, err := time.Parse(time.RFC3339, reg.Str("register.expiresAt"))
	if err != nil || exp.Before(start.Add(14*time.Minute)) || exp.After(time.Now().Add(16*time.Minute)) {
		t.Errorf("expiresAt = %q (%v), want about 15 minutes from now", reg.Str("register.expiresAt"), err)
	}
	regToken := reg.Str("register.accessToken")

	me := s.MustDo(t, regToken, authMeDoc, nil)
	if me.Str("me.id") != id || me.Str("me.email") != "Erin.Life@Example.com" {
		t.Errorf("me = %+v", me.Data)
	}

	var loginToken, loginRefresh string
	for _, login := range []string{"Erin_Life", "erin_life", "ERIN.LIFE@example.COM", "  Erin_Life  "} {
		r := s.MustDo(t, "", authLoginDoc, loginVars(login, pw))
		if r.Str("login.user.id") != id || r.Str("login.user.email") != "Erin.Life@Example.com" {
			t.Errorf("login as %q: %+v", login, r.Data)
		}
		loginToken, loginRefresh = r.Str("login.accessToken"), r.Str("login.refreshToken")
	}

	ref := s.MustDo(t, "", authRefreshDoc, map[string]any{"t": reg.Str("register.refreshToken")})
	if ref.Str("refreshToken.user.id") != id || ref.Str("refreshToken.user.email") != "Erin.Life@Example.com" ||
		ref.Str("refreshToken.refreshToken") == reg.Str("register.refreshToken") {
		t.Errorf("refresh payload: %+v", ref.Data)
	}
	refToken := ref.Str("refreshToken.accessToken")
	if s.MustDo(t, refToken, authMeDoc, nil).Str("me.id") != id {
		t.Errorf("the refreshed access token does not work")
	}

	up := s.MustDo(t, loginToken, `mutation { updateProfile(input: {bio: "hi there"}) { id bio email } }`, nil)
	if up.Str("updateProfile.bio") != "hi there" || up.Str("updateProfile.email") != "Erin.Life@Example.com" {
		t.Errorf("updateProfile: %+v", up.Data)
	}

	out := s.MustDo(t, loginToken, authLogoutDoc, nil)
	if out.Get("logout") != true {
		t.Errorf("logout = %v", out.Get("logout"))
	}
	wantUnauthenticated(t, s.Do(t, loginToken, authMeDoc, nil))
	wantCode(t, authRefresh(t, s, loginRefresh), "UNAUTHENTICATED")
	// Other sessions of the account live on.
	if s.MustDo(t, refToken, `{ me { bio } }`, nil).Str("me.bio") != "hi there" {
		t.Errorf("logout of one session ended another")
	}
}

func TestEmailVisibleToOwnerOnly(t *testing.T) {
	s := gatewaytest.New(t)
	a, b := s.Register(t, "vis_a"), s.Register(t, "vis_b")
	tests := []struct {
		name, token, query string
		path, want         string // want "" means null
	}{
		{"me", a.Token, `{ me { email } }`, "me.email", a.Name + "@example.com"},
		{"own user by id", a.Token, `{ user(id: "` + a.ID + `") { email } }`, "user.email", a.Name + "@example.com"},
		{"own user by name", a.Token, `{ user(name: "` + strings.ToUpper(a.Name) + `") { email } }`, "user.email", a.Name + "@example.com"},
		{"other user by id", b.Token, `{ user(id: "` + a.ID + `") { email } }`, "user.email", ""},
		{"other user by name", b.Token, `{ user(name: "` + a.Name + `") { email } }`, "user.email", ""},
		{"anonymous", "", `{ user(id: "` + a.ID + `") { email } }`, "user.email", ""},
		{"own and other in one document", a.Token, `{ x: user(id: "` + b.ID + `") { email } }`, "x.email", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.MustDo(t, tt.token, tt.query, nil)
			got := r.Get(tt.path)
			if tt.want == "" && got != nil || tt.want != "" && got != tt.want {
				t.Errorf("%s = %v, want %q", tt.path, got, tt.want)
			}
		})
	}
}

// TestConcurrentRegistration races 50 registrations of one name (or one
// e-mail address) in different letter cases: exactly one wins, the rest
// get CONFLICT, and Redis holds exactly one account and nothing else.
func TestConcurrentRegistration(t *testing.T) {
	const n = 50
	tests := []struct {
		name        string
		user, email func(i int) string
	}{
		{
			"same name",
			func(i int) string { return varyCase("Racer_Name", i) },
			func(i int) string { return fmt.Sprintf("racer%d@example.com", i) },
		},
		{
			"same e-mail",
			func(i int) string { return fmt.Sprintf("racer_%d", i) },
			func(i int) string { return varyCase("Racer@Example.com", i) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := gatewaytest.New(t)
			results := make([]*gatewaytest.Response, n)
			var wg sync.WaitGroup
			gate := make(chan struct{})
			for i := range n {
				wg.Go(func() {
					<-gate
					results[i] = s.Do(t, "", `mutation($i: RegisterInput!) { register(input: $i) { user { id name email } } }`,
						registerVars(tt.user(i), tt.email(i), "password123"))
				})
			}
			close(gate)
			wg.Wait()

			var winner *gatewaytest.Response
			for i, r := range results {
				switch {
				case len(r.Errors) == 0:
					if winner != nil {
						t.Errorf("registration %d also succeeded: %+v", i, r.Data)
					}
					winner = r
				case r.Code() != "CONFLICT":
					t.Errorf("registration %d: %+v, want CONFLICT", i, r.Errors)
				}
			}
			if winner == nil {
				t.Fatal("no registration succeeded")
			}
			id := winner.Str("register.user.id")
			wantOneAccount(t, s, id, strings.ToLower(winner.Str("register.user.name")), strings.ToLower(winner.Str("register.user.email")))
		})
	}
}

// varyCase changes the case of letters of s by the bits of i.
func varyCase(s string, i int) string {
	b := []byte(s)
	for j := range b {
		if i>>(j%8)&1 == 1 {
			b[j] = byte(strings.ToUpper(string(b[j]))[0])
		} else {
			b[j] = byte(strings.ToLower(string(b[j]))[0])
		}
	}
	return string(b)
}

// wantOneAccount checks that the server's keys hold exactly one account,
// id, indexed by name and email, with one session, and no partial writes.
func wantOneAccount(t *testing.T, s *gatewaytest.Server, id, name, email string) {
	t.Helper()
	ctx := context.Background()
	k := s.Store.Keys()
	names, err := s.Redis.HGetAll(ctx, k.Names()).Result()
	if err != nil {
		t.Fatal(err)
	}
	emails, err := s.Redis.HGetAll(ctx, k.Emails()).Result()
	if err != nil {
		t.Fatal(err)
	}
	if len(names) != 1 || names[name] != id {
		t.Errorf("names index = %v, want only %s → %s", names, name, id)
	}
	if len(emails) != 1 || emails[email] != id {
		t.Errorf("emails index = %v, want only %s → %s", emails, email, id)
	}
	var users []string
	for _, key := range scanKeys(t, s, k.User("*")) {
		if strings.HasSuffix(key, "}") { // user hashes, not their lists
			users = append(users, key)
		}
	}
	if len(users) != 1 || users[0] != k.User(id) {
		t.Errorf("user hashes = %v, want only %s", users, k.User(id))
	}
	h, err := s.Redis.HGetAll(ctx, k.User(id)).Result()
	if err != nil {
		t.Fatal(err)
	}
	if strings.ToLower(h["name"]) != name || strings.ToLower(h["email"]) != email || !strings.HasPrefix(h["pw"], "$argon2id$") || h["created"] == "" {
		t.Errorf("user hash = %v", h)
	}
	if sessions := scanKeys(t, s, k.Session("*")); len(sessions) != 1 {
		t.Errorf("sessions = %v, want the winner's one", sessions)
	}
}

// scanKeys returns the keys matching a glob pattern.
func scanKeys(t *testing.T, s *gatewaytest.Server, pattern string) []string {
	t.Helper()
	return redistest.Keys(t, s.Redis, pattern)
}

func TestRegistrationUniqueIgnoresCase(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "Case") // name Case_1, e-mail case_1@example.com
	tests := []struct {
		name, user, email string
	}{
		{"name in upper case", strings.ToUpper(u.Name), "fresh1@example.com"},
		{"e-mail in upper case", "fresh_2", strings.ToUpper(u.Name) + "@EXAMPLE.COM"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, "", authRegisterDoc, registerVars(tt.user, tt.email, "password123"))
			wantCode(t, r, "CONFLICT")
		})
	}
	wantOneAccount(t, s, u.ID, strings.ToLower(u.Name), strings.ToLower(u.Name)+"@example.com")
}

// TestLoginFailuresLookAlike: an unknown login and a wrong password get
// the same error, so the API does not tell which accounts exist.
func TestLoginFailuresLookAlike(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "Look")
	tests := []struct {
		name, login, password string
	}{
		{"unknown name", "nobody_here", gatewaytest.Password},
		{"unknown e-mail", "nobody@example.com", gatewaytest.Password},
		{"wrong password by name", u.Name, "wrong password"},
		{"wrong password by e-mail", u.Name + "@example.com", "wrong password"},
		{"empty password", u.Name, ""},
	}
	var first string
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, "", authLoginDoc, loginVars(tt.login, tt.password))
			wantCode(t, r, "UNAUTHENTICATED")
			if r.Data["login"] != nil || len(r.Errors) != 1 {
				t.Fatalf("response %+v", r)
			}
			msg := r.Errors[0].Message
			if first == "" {
				first = msg
			}
			if msg != first {
				t.Errorf("message %q, want the same as every failed login: %q", msg, first)
			}
		})
	}
}

// TestRefreshRotation: a refresh token works once; presenting it again is
// theft, and revokes the whole family, newest tokens included.
func TestRefreshRotation(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "rot")
	other, err := s.Auth.StartSession(context.Background(), mustUser(t, s, u.ID))
	if err != nil {
		t.Fatal(err)
	}

	r1 := authRefresh(t, s, u.Refresh)
	if len(r1.Errors) > 0 || r1.Str("refreshToken.user.id") != u.ID {
		t.Fatalf("first refresh: %+v", r1)
	}
	newAccess, newRefresh := r1.Str("refreshToken.accessToken"), r1.Str("refreshToken.refreshToken")
	s.MustDo(t, newAccess, authMeDoc, nil)

	reuse := authRefresh(t, s, u.Refresh)
	wantCode(t, reuse, "UNAUTHENTICATED")
	if len(reuse.Errors) == 0 || !strings.Contains(reuse.Errors[0].Message, "session was revoked") {
		t.Errorf("reuse answered %+v; the message should say the session was revoked", reuse.Errors)
	}
	wantCode(t, authRefresh(t, s, newRefresh), "UNAUTHENTICATED")
	wantUnauthenticated(t, s.Do(t, newAccess, authMeDoc, nil))
	wantUnauthenticated(t, s.Do(t, u.Token, authMeDoc, nil))

	// Another session of the same account is not affected.
	if r := authRefresh(t, s, other.RefreshToken); len(r.Errors) > 0 {
		t.Errorf("the other session's refresh: %+v", r.Errors)
	}
}

// TestRefreshRace sends two refreshes with the same token at once (two
// tabs): within the grace window both get the same successor and nothing is
// revoked; without a window at most one may succeed, and the loser's
// attempt counts as reuse, so the family is dead.
func TestRefreshRace(t *testing.T) {
	for _, grace := range []time.Duration{0, 15 * time.Second} {
		t.Run(fmt.Sprint("grace ", grace), func(t *testing.T) {
			s := gatewaytest.New(t, gatewaytest.Options{Abuse: &gateway.Abuse{RefreshGrace: grace}})
			u := s.Register(t, "race")
			user := mustUser(t, s, u.ID)
			for round := range 5 {
				sess, err := s.Auth.StartSession(context.Background(), user)
				if err != nil {
					t.Fatal(err)
				}
				var results [2]*gatewaytest.Response
				var wg sync.WaitGroup
				gate := make(chan struct{})
				for i := range results {
					wg.Go(func() {
						<-gate
						results[i] = authRefresh(t, s, sess.RefreshToken)
					})
				}
				close(gate)
				wg.Wait()
				if grace > 0 {
					a, b := results[0].Str("refreshToken.refreshToken"), results[1].Str("refreshToken.refreshToken")
					if len(results[0].Errors)+len(results[1].Errors) > 0 || a == "" || a != b {
						t.Fatalf("round %d: %+v / %+v, want the same successor twice", round, results[0], results[1])
					}
					s.MustDo(t, results[1].Str("refreshToken.accessToken"), authMeDoc, nil)
					if r := authRefresh(t, s, a); len(r.Errors) > 0 {
						t.Fatalf("round %d: the successor does not rotate: %+v", round, r.Errors)
					}
					continue
				}
				wins := 0
				for _, r := range results {
					if len(r.Errors) == 0 {
						wins++
						wantCode(t, authRefresh(t, s, r.Str("refreshToken.refreshToken")), "UNAUTHENTICATED")
					} else {
						wantCode(t, r, "UNAUTHENTICATED")
					}
				}
				if wins > 1 {
					t.Errorf("round %d: both refreshes succeeded", round)
				}
			}
		})
	}
}

func TestLogout(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "bye")
	if r := s.MustDo(t, u.Token, authLogoutDoc, nil); r.Get("logout") != true {
		t.Fatalf("logout = %+v", r.Data)
	}
	// The denylist entry expires with the token (15 min) plus the leeway.
	var c jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(u.Token, &c); err != nil {
		t.Fatal(err)
	}
	ttl, err := s.Redis.TTL(context.Background(), s.Store.Keys().Denied(c.ID)).Result()
	if err != nil || ttl <= 0 || ttl > 15*time.Minute+30*time.Second {
		t.Errorf("denylist entry TTL = %v (%v), want (0, 15m30s]", ttl, err)
	}

	tests := []struct {
		name string
		run  func() *gatewaytest.Response
	}{
		{"me replayed after logout", func() *gatewaytest.Response { return s.Do(t, u.Token, authMeDoc, nil) }},
		{"logout replayed", func() *gatewaytest.Response { return s.Do(t, u.Token, authLogoutDoc, nil) }},
		{"mutation replayed", func() *gatewaytest.Response {
			return s.Do(t, u.Token, `mutation { updateProfile(input: {bio: "x"}) { bio } }`, nil)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { wantUnauthenticated(t, tt.run()) })
	}
	t.Run("refresh family dead", func(t *testing.T) {
		wantCode(t, authRefresh(t, s, u.Refresh), "UNAUTHENTICATED")
	})
	t.Run("anonymous logout", func(t *testing.T) {
		r := s.Do(t, "", authLogoutDoc, nil)
		wantCode(t, r, "UNAUTHENTICATED")
	})
}

// TestBadTokenIsRefused: a token that is present but not valid refuses the
// whole request with 401; the request never runs as anonymous.
func TestBadTokenIsRefused(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "bad")
	now := time.Now()
	signed := func(secret string, edit func(c jwt.MapClaims)) string {
		c := jwt.MapClaims{
			"sub": u.ID, "iss": "socialgw", "aud": "socialgw-api", "jti": "forged-jti",
			"iat": now.Unix(), "exp": now.Add(10 * time.Minute).Unix(),
		}
		if edit != nil {
			edit(c)
		}
		tok, err := jwt.NewWithClaims(jwt.SigningMethodHS256, c).SignedString([]byte(secret))
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	if r := s.Do(t, signed(gatewaytest.Secret, nil), `{ me { id } }`, nil); r.Str("me.id") != u.ID {
		t.Fatalf("the table's well-formed token is refused: %+v", r)
	}
	revoked, err := s.Auth.StartSession(context.Background(), mustUser(t, s, u.ID))
	if err != nil {
		t.Fatal(err)
	}
	fam := auth.SessionOf(revoked.RefreshToken)
	if err := s.Store.RevokeSession(context.Background(), fam); err != nil {
		t.Fatal(err)
	}
	none, err := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{
		"sub": u.ID, "iss": "socialgw", "aud": "socialgw-api", "jti": "x", "exp": now.Add(time.Hour).Unix(),
	}).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name, header string
	}{
		{"garbage", "Bearer garbage"},
		{"bare token without scheme", u.Token},
		{"basic scheme", "Basic dXNlcjpwYXNz"},
		{"bearer without token", "Bearer"},
		{"expired", "Bearer " + signed(gatewaytest.Secret, func(c jwt.MapClaims) {
			c["iat"], c["exp"] = now.Add(-20*time.Minute).Unix(), now.Add(-time.Minute).Unix()
		})},
		{"another secret", "Bearer " + signed("another-secret-another-secret-012345", nil)},
		{"alg none", "Bearer " + none},
		{"wrong audience", "Bearer " + signed(gatewaytest.Secret, func(c jwt.MapClaims) { c["aud"] = "other" })},
		{"wrong issuer", "Bearer " + signed(gatewaytest.Secret, func(c jwt.MapClaims) { c["iss"] = "other" })},
		{"no exp", "Bearer " + signed(gatewaytest.Secret, func(c jwt.MapClaims) { delete(c, "exp") })},
		{"tampered", "Bearer " + u.Token[:strings.LastIndexByte(u.Token, '.')] + ".AAAA"},
		{"session revoked", "Bearer " + revoked.AccessToken},
	}
	docs := []struct{ name, doc string }{
		{"query", `{ me { id } }`},
		{"public mutation", `mutation { login(input: {login: "x", password: "y"}) { accessToken } }`},
	}
	for _, tt := range tests {
		for _, d := range docs {
			t.Run(tt.name+"/"+d.name, func(t *testing.T) {
				status, h, body := httpDo(t, s, http.MethodPost, "/query", map[string]string{
					"Content-Type": "application/json", "Authorization": tt.header,
				}, strings.NewReader(`{"query": `+quote(d.doc)+`}`))
				r := decodeGraphQL(t, status, body)
				wantUnauthenticated(t, r)
				if !strings.HasPrefix(h.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("WWW-Authenticate = %q", h.Get("WWW-Authenticate"))
				}
			})
		}
	}
}

func TestAnonymousMe(t *testing.T) {
	s := gatewaytest.New(t)
	r := s.MustDo(t, "", `{ me { id } }`, nil)
	if v, ok := r.Data["me"]; !ok || v != nil || r.Status != http.StatusOK {
		t.Errorf("anonymous me: status %d, data %v; want me: null", r.Status, r.Data)
	}
}

func TestUserLookup(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "Look_Up")
	tests := []struct {
		name, query, code string
		want              any // user.name, or nil for null
	}{
		{"by id", `{ user(id: "` + u.ID + `") { name } }`, "", u.Name},
		{"by name", `{ user(name: "` + u.Name + `") { name } }`, "", u.Name},
		{"by name in other case", `{ user(name: "` + strings.ToLower(u.Name) + `") { name } }`, "", u.Name},
		{"unknown id", `{ user(id: "999999") { name } }`, "", nil},
		{"unknown name", `{ user(name: "no_such_user") { name } }`, "", nil},
		{"both id and name", `{ user(id: "` + u.ID + `", name: "` + u.Name + `") { name } }`, "BAD_USER_INPUT", nil},
		{"neither", `{ user { name } }`, "BAD_USER_INPUT", nil},
		{"both as null variables", `query($i: ID, $n: String) { user(id: $i, name: $n) { name } }`, "BAD_USER_INPUT", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, "", tt.query, nil)
			wantCode(t, r, tt.code)
			if tt.code == "" {
				if got := r.Get("user.name"); got != tt.want {
					t.Errorf("user.name = %v, want %v", got, tt.want)
				}
			}
		})
	}
}

func TestUpdateProfileBio(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "bio")
	const doc = `mutation($b: String) { updateProfile(input: {bio: $b}) { id bio } }`
	tests := []struct {
		name  string
		token string
		vars  map[string]any
		code  string
		want  any // the stored bio afterwards (nil: null)
	}{
		{"set", u.Token, map[string]any{"b": "hello"}, "", "hello"},
		{"trimmed", u.Token, map[string]any{"b": "  spaced out \n"}, "", "spaced out"},
		{"300 characters", u.Token, map[string]any{"b": strings.Repeat("a", 300)}, "", strings.Repeat("a", 300)},
		{"300 two-byte characters", u.Token, map[string]any{"b": strings.Repeat("é", 300)}, "", strings.Repeat("é", 300)},
		{"301 characters refused", u.Token, map[string]any{"b": strings.Repeat("b", 301)}, "BAD_USER_INPUT", strings.Repeat("é", 300)},
		{"omitted leaves it", u.Token, nil, "", strings.Repeat("é", 300)},
		{"anonymous refused", "", map[string]any{"b": "anon"}, "UNAUTHENTICATED", strings.Repeat("é", 300)},
		{"empty clears", u.Token, map[string]any{"b": ""}, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := doc
			if tt.vars == nil {
				doc = `mutation { updateProfile(input: {}) { id bio } }`
			}
			r := s.Do(t, tt.token, doc, tt.vars)
			wantCode(t, r, tt.code)
			if tt.code == "" && r.Get("updateProfile.bio") != tt.want {
				t.Errorf("updateProfile.bio = %v, want %v", r.Get("updateProfile.bio"), tt.want)
			}
			if got := s.MustDo(t, "", `{ user(id: "`+u.ID+`") { bio } }`, nil).Get("user.bio"); got != tt.want {
				t.Errorf("stored bio = %v, want %v", got, tt.want)
			}
		})
	}
}
