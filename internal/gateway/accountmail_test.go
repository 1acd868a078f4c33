package gateway_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/httpapi"
	"github.com/socialgw/gateway/internal/mailtest"
)

const (
	mRegister = `mutation($n: String!, $e: String!, $p: String!) { register(input: {name: $n, email: $e, password: $p}) { accessToken refreshToken user { id } } }`
	mLogin    = `mutation($l: String!, $p: String!) { login(input: {login: $l, password: $p}) { accessToken refreshToken } }`
	mRefresh  = `mutation($r: String!) { refreshToken(refreshToken: $r) { accessToken } }`
	mVerify   = `mutation($t: String!) { verifyEmail(token: $t) { id email emailVerified } }`
	mChangePw = `mutation($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) { accessToken refreshToken user { id } } }`
	mReqReset = `mutation($e: String!) { requestPasswordReset(email: $e) }`
	mReset    = `mutation($t: String!, $p: String!) { resetPassword(token: $t, newPassword: $p) { accessToken refreshToken } }`
	mChangeEm = `mutation($e: String!, $p: String!) { changeEmail(newEmail: $e, password: $p) }`
	qMe       = `{ me { email emailVerified } }`
	pw1       = "first password 1"
	pw2       = "second password 2"
)

// account is a user registered through the API, with a Mailpit address.
type account struct {
	id, name, email, token, refresh string
}

var accountSeq atomic.Int64

func registerMailed(t *testing.T, s *gatewaytest.Server, prefix string) account {
	t.Helper()
	name := prefix + "_" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "") + "_" + string(rune('a'+accountSeq.Add(1)%26))
	email := mailtest.Address(t, prefix)
	r := s.MustDo(t, "", mRegister, map[string]any{"n": name, "e": email, "p": pw1})
	return account{id: r.Str("register.user.id"), name: name, email: email,
		token: r.Str("register.accessToken"), refresh: r.Str("register.refreshToken")}
}

// Registration mails a confirmation token: it confirms the address once,
// only to its owner is the flag shown, and a forged or used token changes
// nothing.
func TestRegisterVerifiesEmail(t *testing.T) {
	s := gatewaytest.New(t)
	mail := gatewaytest.NewMail(t, s)
	a := registerMailed(t, s, "verify")
	if r := s.MustDo(t, a.token, qMe, nil); r.Get("me.emailVerified") != false {
		t.Fatalf("before confirmation: %v", r.Get("me"))
	}
	tok := mail.Token(t, a.email, 1)
	other := s.Register(t, "onlooker")
	r := s.MustDo(t, "", mVerify, map[string]any{"t": tok})
	if r.Get("verifyEmail.emailVerified") != nil || r.Get("verifyEmail.email") != nil {
		t.Fatalf("an anonymous caller sees the account's address: %v", r.Get("verifyEmail"))
	}
	if r := s.MustDo(t, a.token, qMe, nil); r.Get("me.emailVerified") != true {
		t.Fatalf("after confirmation: %v", r.Get("me"))
	}
	q := `query($id: ID!) { user(id: $id) { emailVerified } }`
	if r := s.MustDo(t, other.Token, q, map[string]any{"id": a.id}); r.Get("user.emailVerified") != nil {
		t.Fatalf("another user sees emailVerified: %v", r.Get("user"))
	}
	for _, bad := range []string{tok, tok[:len(tok)-1] + "x", "v" + other.ID + tok[strings.Index(tok, "."):], "", strings.Repeat("v1.", 200)} {
		s.Do(t, "", mVerify, map[string]any{"t": bad}).WantCode(t, "BAD_USER_INPUT")
	}
}

// changeEmail: the password is required; the new address is reserved,
// mailed a token, and becomes the account's only when verifyEmail
// confirms it; the old one gets a notice and is freed.
func TestChangeEmail(t *testing.T) {
	s := gatewaytest.New(t)
	mail := gatewaytest.NewMail(t, s)
	a := registerMailed(t, s, "mover")
	b := registerMailed(t, s, "rival")
	next := mailtest.Address(t, "moved")
	// The registrations' confirmations go first: a later one would
	// replace the change's token (one pending token a purpose).
	mail.Drain(t)

	s.Do(t, a.token, mChangeEm, map[string]any{"e": next, "p": "wrong password"}).WantCode(t, "BAD_USER_INPUT")
	s.Do(t, a.token, mChangeEm, map[string]any{"e": b.email, "p": pw1}).WantCode(t, "CONFLICT")
	s.Do(t, a.token, mChangeEm, map[string]any{"e": "not an address", "p": pw1}).WantCode(t, "BAD_USER_INPUT")
	s.Do(t, "", mChangeEm, map[string]any{"e": next, "p": pw1}).WantCode(t, "UNAUTHENTICATED")
	if r := s.MustDo(t, a.token, mChangeEm, map[string]any{"e": next, "p": pw1}); r.Get("changeEmail") != true {
		t.Fatalf("changeEmail: %v", r.Get("changeEmail"))
	}
	tok := mail.Token(t, next, 1)
	// The registration's confirmation and the notice, sent in either order.
	var notice *mailtest.Message
	for _, m := range mail.Mailpit.Wait(t, a.email, 2) {
		if m.Subject == "Your e-mail address is being changed" {
			notice = &m
		}
	}
	if notice == nil || !strings.Contains(notice.Text, next) || mailtest.Token(*notice) != "" {
		t.Fatalf("the notice to the old address: %+v", notice)
	}
	// Reserved while pending: no one else registers it or asks for it,
	// and it logs no one in.
	s.Do(t, "", mRegister, map[string]any{"n": "squatter", "e": next, "p": pw1}).WantCode(t, "CONFLICT")
	s.Do(t, b.token, mChangeEm, map[string]any{"e": next, "p": pw1}).WantCode(t, "CONFLICT")
	s.Do(t, "", mLogin, map[string]any{"l": next, "p": pw1}).WantCode(t, "UNAUTHENTICATED")
	if r := s.MustDo(t, a.token, qMe, nil); r.Get("me.email") != a.email {
		t.Fatalf("the address changed before confirmation: %v", r.Get("me"))
	}

	r := s.MustDo(t, a.token, mVerify, map[string]any{"t": tok})
	if r.Get("verifyEmail.email") != next || r.Get("verifyEmail.emailVerified") != true {
		t.Fatalf("after confirmation: %v", r.Get("verifyEmail"))
	}
	s.MustDo(t, "", mLogin, map[string]any{"l": next, "p": pw1})
	s.Do(t, "", mLogin, map[string]any{"l": a.email, "p": pw1}).WantCode(t, "UNAUTHENTICATED")
	// The old address is free again.
	s.MustDo(t, "", mRegister, map[string]any{"n": a.name + "_2", "e": a.email, "p": pw1})
}

// A reset token works once, before it expires; resetPassword ends every
// session; the request answers the same for an address no account has,
// and mails nothing then.
func TestPasswordReset(t *testing.T) {
	var skew atomic.Int64
	clock := func() time.Time { return time.Now().Add(time.Duration(skew.Load())) }
	s := gatewaytest.New(t, gatewaytest.Options{Clock: clock})
	mail := gatewaytest.NewMail(t, s)
	a := registerMailed(t, s, "forgetful")
	nobody := mailtest.Address(t, "nobody")
	mail.Token(t, a.email, 1) // the registration's confirmation first

	for _, e := range []string{nobody, a.email} {
		if r := s.MustDo(t, "", mReqReset, map[string]any{"e": e}); r.Get("requestPasswordReset") != true {
			t.Fatalf("requestPasswordReset(%s): %v", e, r.Get("requestPasswordReset"))
		}
	}
	tok := mail.Token(t, a.email, 2)
	if got := mail.Mailpit.Messages(t, nobody); len(got) != 0 {
		t.Fatalf("an address no account has was mailed: %+v", got)
	}

	s.Do(t, "", mReset, map[string]any{"t": tok, "p": "short"}).WantCode(t, "BAD_USER_INPUT")
	s.Do(t, "", mReset, map[string]any{"t": tok[:len(tok)-2] + "xx", "p": pw2}).WantCode(t, "BAD_USER_INPUT")
	s.Do(t, "", mReset, map[string]any{"t": "v" + tok[1:], "p": pw2}).WantCode(t, "BAD_USER_INPUT")
	r := s.MustDo(t, "", mReset, map[string]any{"t": tok, "p": pw2})
	s.MustDo(t, r.Str("resetPassword.accessToken"), qMe, nil)
	s.Do(t, "", mReset, map[string]any{"t": tok, "p": "third password 3"}).WantCode(t, "BAD_USER_INPUT")
	// Every earlier session ended.
	s.Do(t, "", mRefresh, map[string]any{"r": a.refresh}).WantCode(t, "UNAUTHENTICATED")
	if status, _ := gatewaytest.PostRaw(t, s.URL, a.token, qMe, nil); status != 401 {
		t.Fatalf("the old access token answers %d, want 401", status)
	}
	s.Do(t, "", mLogin, map[string]any{"l": a.name, "p": pw1}).WantCode(t, "UNAUTHENTICATED")
	s.MustDo(t, "", mLogin, map[string]any{"l": a.name, "p": pw2})

	// A token used after its 30 minutes is refused, and changes nothing.
	s.MustDo(t, "", mReqReset, map[string]any{"e": a.email})
	late := mail.Token(t, a.email, 3)
	skew.Store(int64(31 * time.Minute))
	s.Do(t, "", mReset, map[string]any{"t": late, "p": "third password 3"}).WantCode(t, "BAD_USER_INPUT")
	skew.Store(0)
	s.MustDo(t, "", mLogin, map[string]any{"l": a.name, "p": pw2})
}

// changePassword needs the current password, ends every other session,
// their open websockets included, and returns a fresh pair; the session
// it came from keeps its access token and socket but not its refresh
// token.
func TestChangePassword(t *testing.T) {
	s := gatewaytest.New(t, gatewaytest.Options{Sockets: &httpapi.SocketLimits{RecheckAuth: 200 * time.Millisecond}})
	a := registerMailed(t, s, "careful")
	other := s.MustDo(t, "", mLogin, map[string]any{"l": a.name, "p": pw1})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	otherSocket := openSocket(ctx, t, s, other.Str("login.accessToken"))
	ownSocket := openSocket(ctx, t, s, a.token)

	s.Do(t, a.token, mChangePw, map[string]any{"c": "wrong password", "n": pw2}).WantCode(t, "BAD_USER_INPUT")
	s.Do(t, a.token, mChangePw, map[string]any{"c": pw1, "n": "short"}).WantCode(t, "BAD_USER_INPUT")
	s.MustDo(t, other.Str("login.accessToken"), qMe, nil) // nothing changed
	r := s.MustDo(t, a.token, mChangePw, map[string]any{"c": pw1, "n": pw2})
	fresh := r.Str("changePassword.accessToken")

	_, err := gatewaytest.WSNext(ctx, otherSocket)
	var ce websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != 4401 {
		t.Fatalf("the other session's socket: %v, want close 4401", err)
	}
	s.Do(t, "", mRefresh, map[string]any{"r": other.Str("login.refreshToken")}).WantCode(t, "UNAUTHENTICATED")
	if status, _ := gatewaytest.PostRaw(t, s.URL, other.Str("login.accessToken"), qMe, nil); status != 401 {
		t.Fatalf("the other session's access token answers %d, want 401", status)
	}
	s.Do(t, "", mRefresh, map[string]any{"r": a.refresh}).WantCode(t, "UNAUTHENTICATED")
	s.MustDo(t, a.token, qMe, nil)
	s.MustDo(t, fresh, qMe, nil)
	s.MustDo(t, "", mRefresh, map[string]any{"r": r.Str("changePassword.refreshToken")})
	// The session that asked keeps its socket.
	gatewaytest.WSSend(ctx, t, ownSocket, gatewaytest.WSMessage{ID: "1", Type: "subscribe", Payload: []byte(`{"query":"{ me { id } }"}`)})
	if m, err := gatewaytest.WSNext(ctx, ownSocket); err != nil || m.Type != "next" {
		t.Fatalf("the asking session's socket: %+v %v", m, err)
	}
	s.MustDo(t, "", mLogin, map[string]any{"l": a.name, "p": pw2})
}

func openSocket(ctx context.Context, t *testing.T, s *gatewaytest.Server, token string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(ctx, s.WSURL(), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{Type: "connection_init", Payload: []byte(`{"Authorization":"Bearer ` + token + `"}`)})
	if m, err := gatewaytest.WSNext(ctx, c); err != nil || m.Type != "connection_ack" {
		t.Fatalf("connection_init: %+v %v", m, err)
	}
	return c
}

// REQUIRE_VERIFIED_EMAIL refuses posts and comments until the address is
// confirmed.
func TestRequireVerifiedEmail(t *testing.T) {
	s := gatewaytest.New(t, gatewaytest.Options{Accounts: &gateway.AccountConfig{RequireVerifiedEmail: true}})
	mail := gatewaytest.NewMail(t, s)
	a := registerMailed(t, s, "newcomer")
	post := `mutation { createPost(input: {content: "hello"}) { id } }`
	s.Do(t, a.token, post, nil).WantCode(t, "FORBIDDEN")
	s.MustDo(t, "", mVerify, map[string]any{"t": mail.Token(t, a.email, 1)})
	id := s.MustDo(t, a.token, post, nil).Str("createPost.id")
	b := registerMailed(t, s, "lurker")
	s.Do(t, b.token, `mutation($p: ID!) { addComment(postId: $p, content: "hi") { id } }`, map[string]any{"p": id}).WantCode(t, "FORBIDDEN")
}

// requestPasswordReset takes the same time whether or not an account has
// the address: the request does the same work either way (the worker
// looks the address up). Measured here as two interleaved distributions
// whose medians must agree within a generous bound; the figures are
// logged (docs/security.md).
func TestPasswordResetTiming(t *testing.T) {
	s := gatewaytest.New(t)
	a := registerMailed(t, s, "timed")
	const rounds = 60
	var known, unknown []time.Duration
	for i := range rounds {
		for _, e := range []string{a.email, mailtest.Address(t, "ghost")} {
			start := time.Now()
			s.MustDo(t, "", mReqReset, map[string]any{"e": e})
			d := time.Since(start)
			if e == a.email {
				known = append(known, d)
			} else {
				unknown = append(unknown, d)
			}
		}
		_ = i
	}
	mk, mu := median(known), median(unknown)
	t.Logf("requestPasswordReset over %d rounds: median %v for a registered address, %v for an unknown one", rounds, mk, mu)
	if hi, lo := max(mk, mu), min(mk, mu); hi > 2*lo+5*time.Millisecond {
		t.Errorf("medians differ: %v registered, %v unknown", mk, mu)
	}
}

func median(ds []time.Duration) time.Duration {
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return ds[len(ds)/2]
}
