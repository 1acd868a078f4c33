package gateway_test

import (
	"testing"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/mailtest"
)

const mResend = `mutation { resendVerification }`

// resendVerification, end to end through a real Mailpit: it mails a new
// confirmation token, which replaces the earlier one; once the address
// is confirmed there is nothing to send again (BAD_USER_INPUT); with a
// change of address pending, the new address gets its token again; and
// it needs a signed-in viewer.
func TestResendVerification(t *testing.T) {
	s := gatewaytest.New(t)
	mail := gatewaytest.NewMail(t, s)
	a := registerMailed(t, s, "resend")
	first := mail.Token(t, a.email, 1)

	s.Do(t, "", mResend, nil).WantCode(t, "UNAUTHENTICATED")
	if r := s.MustDo(t, a.token, mResend, nil); r.Get("resendVerification") != true {
		t.Fatalf("resendVerification: %v", r.Data)
	}
	second := mail.Token(t, a.email, 2)
	if second == first {
		t.Fatal("the confirmation sent again carries the same token")
	}
	s.Do(t, "", mVerify, map[string]any{"t": first}).WantCode(t, "BAD_USER_INPUT")
	if r := s.MustDo(t, "", mVerify, map[string]any{"t": second}); r.Get("verifyEmail.id") != a.id {
		t.Fatalf("verifyEmail with the token sent again: %v", r.Data)
	}
	if r := s.MustDo(t, a.token, qMe, nil); r.Get("me.emailVerified") != true {
		t.Fatalf("after confirmation: %v", r.Get("me"))
	}
	s.Do(t, a.token, mResend, nil).WantCode(t, "BAD_USER_INPUT")
	mail.Drain(t)
	if got := len(mail.Mailpit.Messages(t, a.email)); got != 2 {
		t.Errorf("%d e-mails to the confirmed address, want 2", got)
	}

	// A pending change: the new address gets its token again.
	next := mailtest.Address(t, "resent")
	s.MustDo(t, a.token, mChangeEm, map[string]any{"e": next, "p": pw1})
	mail.Token(t, next, 1)
	s.MustDo(t, a.token, mResend, nil)
	tok := mail.Token(t, next, 2)
	if r := s.MustDo(t, a.token, mVerify, map[string]any{"t": tok}); r.Get("verifyEmail.email") != next {
		t.Fatalf("confirming the change with the token sent again: %v", r.Get("verifyEmail"))
	}
}
