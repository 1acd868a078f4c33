package gatewaytest

import (
	"context"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/mail"
	"github.com/socialgw/gateway/internal/mailtest"
)

// Mail is a worker of a test server's mail queue that sends, with the
// gateway's SMTP sender, to a real Mailpit (internal/mailtest); the test
// runs it when it wants the queued e-mails sent (Drain).
type Mail struct {
	w       *fanout.Worker
	Mailpit *mailtest.Server
}

// NewMail returns a mail worker for s; its tokens follow s's clock.
func NewMail(tb testing.TB, s *Server) *Mail {
	tb.Helper()
	mp := mailtest.Start(tb)
	sender, err := mail.NewSMTP(mp.SMTPURL, "no-reply@socialgw.test")
	if err != nil {
		tb.Fatal(err)
	}
	m := &auth.Mailer{Store: s.Mail, Accounts: s.Store.AccountService, Sender: sender, Log: Logger(tb),
		Now: s.cfg.Tokens.Now, ResetTTL: s.cfg.Accounts.ResetTokenTTL, Attempts: 1}
	stream, dead, alive := s.Mail.MailQueue()
	w, err := fanout.New(s.Redis, fanout.Config{Stream: stream, Dead: dead, Alive: alive, Group: "mail",
		Consumer: "test", MinIdle: time.Minute}, m.Handle, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return &Mail{w: w, Mailpit: mp}
}

// Drain sends every queued e-mail, and fails the test when a job fails.
func (m *Mail) Drain(tb testing.TB) {
	tb.Helper()
	if _, err := m.w.Drain(context.Background()); err != nil {
		tb.Fatal(err)
	}
	if st := m.w.Stats(); st.Failed > 0 {
		tb.Fatalf("mail jobs failed: %+v", st)
	}
}

// Token sends what is queued, waits for the n-th e-mail to to, and
// returns the token it carries.
func (m *Mail) Token(tb testing.TB, to string, n int) string {
	tb.Helper()
	m.Drain(tb)
	got := m.Mailpit.Wait(tb, to, n)
	tok := mailtest.Token(got[n-1])
	if tok == "" {
		tb.Fatalf("e-mail %d to %s carries no token:\n%s", n, to, got[n-1].Text)
	}
	return tok
}

// accountsOf is the account settings the last of opts that has any
// gives.
func accountsOf(opts []Options) gateway.AccountConfig {
	var c gateway.AccountConfig
	for _, o := range opts {
		if o.Accounts != nil {
			c = *o.Accounts
		}
	}
	return c
}
