package auth

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/socialgw/gateway/internal/mail"
	"github.com/socialgw/gateway/internal/social"
)

// The kinds of account e-mails, and the fields of their jobs on the mail
// queue. A job never holds a token: the worker makes the token when it
// writes the e-mail, and only its hash is stored, so neither the queue
// nor its dead-letter stream holds one.
const (
	MailVerify = "verify" // confirm the registration's address
	MailChange = "change" // confirm the new address of a change
	MailNotice = "notice" // tell the old address of a change
	MailReset  = "reset"  // a password-reset token

	jobKind = "kind"
	jobUser = "user" // the account ("" for reset: the worker looks it up)
	jobTo   = "to"   // the recipient
	jobNew  = "new"  // of a notice: the address asked for
)

// Defaults of Mailer.
const (
	DefaultMailAttempts = 5
	DefaultMailBackoff  = 2 * time.Second
)

// Mailer carries out the mail queue's jobs (a fanout.Handler): it makes
// the token an e-mail carries, stores its hash, writes the e-mail and
// sends it, retrying a failed send with an exponential backoff. A mail
// that fails every attempt is logged with its kind and user, never its
// token, and dropped: its token (if any) expires unused, and the user can
// ask again.
type Mailer struct {
	Store    MailStore
	Accounts social.AccountStore
	Sender   mail.Sender
	Log      *slog.Logger
	// Now is the tokens' clock (time.Now when nil).
	Now      func() time.Time
	ResetTTL time.Duration
	// LogTokens logs each e-mail's token: development, where the e-mails
	// are files and the log is the quickest way to finish a flow.
	LogTokens bool
	// PublicURL, when set, is the gateway's public address
	// (scheme://host[:port]): e-mails then carry, beside the token, a link
	// to the reference app (/app/) that fills it in (AppLink).
	PublicURL string
	// Attempts is how many times a send is tried; Backoff the wait after
	// the first failure, doubled after each next one.
	Attempts int
	Backoff  time.Duration
}

// Handle carries out one job. An error (Redis failing, the process
// stopping) leaves the job on the queue, to be run again.
func (m *Mailer) Handle(ctx context.Context, job map[string]string) error {
	msg, uid, token, err := m.compose(ctx, job)
	if err != nil || msg == nil {
		return err
	}
	attempts, err := m.send(ctx, *msg)
	if err != nil && ctx.Err() != nil {
		return fmt.Errorf("send %s e-mail: %w", msg.Kind, err)
	}
	if err != nil {
		m.log().Error("account e-mail not sent", "kind", msg.Kind, "user", uid, "attempts", attempts, "err", err)
		return nil
	}
	attrs := []any{"kind", msg.Kind, "user", uid}
	if m.LogTokens && token != "" {
		attrs = append(attrs, "token", token)
	}
	m.log().Info("account e-mail sent", attrs...)
	return nil
}

func (m *Mailer) log() *slog.Logger {
	if m.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return m.Log
}

func (m *Mailer) now() time.Time {
	if m.Now == nil {
		return time.Now()
	}
	return m.Now()
}

// send tries m.Attempts times, waiting Backoff, then twice as long, and
// so on, between tries; it returns how many it made.
func (m *Mailer) send(ctx context.Context, msg mail.Message) (int, error) {
	attempts, wait := max(m.Attempts, 1), m.Backoff
	if m.Attempts == 0 {
		attempts = DefaultMailAttempts
	}
	if wait <= 0 {
		wait = DefaultMailBackoff
	}
	var err error
	for i := 1; ; i++ {
		if err = m.Sender.Send(ctx, msg); err == nil || i == attempts {
			return i, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return i, err
		case <-t.C:
		}
		wait *= 2
	}
}

// compose writes a job's e-mail, with a new token where it carries one;
// nil when there is nothing to send (no account has the address of a
// reset, or the account is gone).
func (m *Mailer) compose(ctx context.Context, job map[string]string) (msg *mail.Message, uid, token string, err error) {
	kind, uid, to := job[jobKind], job[jobUser], job[jobTo]
	if kind == MailReset {
		uid, err = m.Store.UserIDByEmail(ctx, to)
		if social.IsCode(err, social.NotFound) {
			return nil, "", "", nil
		}
		if err != nil {
			return nil, "", "", err
		}
	}
	u, err := m.Accounts.User(ctx, uid)
	if social.IsCode(err, social.NotFound) {
		return nil, uid, "", nil
	}
	if err != nil {
		return nil, uid, "", err
	}
	text, ok := mailTexts[kind]
	if !ok {
		return nil, uid, "", fmt.Errorf("mail job of unknown kind %q", kind)
	}
	if text.purpose != "" {
		if token, err = m.newToken(ctx, text.purpose, uid, to); err != nil {
			return nil, uid, "", err
		}
	}
	body := text.body(u.Name, job[jobNew], m.ttl(text.purpose))
	if token != "" {
		body += "\ntoken: " + token + "\n"
		if m.PublicURL != "" {
			body += "link: " + AppLink(m.PublicURL, text.purpose, token) + "\n"
		}
	}
	return &mail.Message{Kind: kind, To: to, Subject: text.subject, Text: body}, uid, token, nil
}

func (m *Mailer) ttl(purpose string) time.Duration {
	if purpose == social.TokenReset {
		if m.ResetTTL > 0 {
			return m.ResetTTL
		}
		return DefaultResetTTL
	}
	return VerifyTTL
}

// newToken makes a token of purpose for uid, mailed to to, and stores its
// hash (replacing the previous token of that purpose).
func (m *Mailer) newToken(ctx context.Context, purpose, uid, to string) (string, error) {
	token, hash := newMailToken(purpose, uid)
	t := social.MailToken{Hash: hash, Email: to, Expires: m.now().Add(m.ttl(purpose))}
	if err := m.Store.SaveMailToken(ctx, purpose, uid, t); err != nil {
		return "", err
	}
	return token, nil
}

// mailText is what an e-mail of a kind says; purpose is the token it
// carries ("" for none).
type mailText struct {
	subject, purpose string
	body             func(name, newEmail string, ttl time.Duration) string
}

var mailTexts = map[string]mailText{
	MailVerify: {"Confirm your e-mail address", social.TokenVerify, func(name, _ string, ttl time.Duration) string {
		return "Hello " + name + ",\n\nconfirm that this address is yours: give the token below to verifyEmail\n" +
			"(the app's settings page has a field for it). It works once, for " + readableTTL(ttl) + ".\n"
	}},
	MailChange: {"Confirm your new e-mail address", social.TokenVerify, func(name, _ string, ttl time.Duration) string {
		return "Hello " + name + ",\n\nyour account asked to use this address from now on. It does once you give\n" +
			"the token below to verifyEmail (the app's settings page has a field for it).\n" +
			"It works once, for " + readableTTL(ttl) + ". If you did not ask, ignore this e-mail.\n"
	}},
	MailNotice: {"Your e-mail address is being changed", "", func(name, newEmail string, _ time.Duration) string {
		return "Hello " + name + ",\n\nyour account asked to change its e-mail address to " + newEmail + ".\n" +
			"Nothing changes until that address confirms it. If you did not ask, someone knows\n" +
			"your password: change it now, which also ends every other session.\n"
	}},
	MailReset: {"Reset your password", social.TokenReset, func(name, _ string, ttl time.Duration) string {
		return "Hello " + name + ",\n\na new password was asked for your account. Give the token below with your new\n" +
			"password to resetPassword (the app's login page has a form for it). It works once,\n" +
			"for " + readableTTL(ttl) + ", and ends every session. If you did not ask, ignore this e-mail:\n" +
			"your password stays as it is.\n"
	}},
}

// AppLink is the reference app's address that takes token of purpose:
// the app reads its fragment (#verify=… confirms the address, #reset=…
// opens the new-password form), which no server, proxy or log sees.
func AppLink(publicURL, purpose, token string) string {
	return strings.TrimRight(publicURL, "/") + "/app/#" + purpose + "=" + token
}

// readableTTL says a token's lifetime as a person would: "30 minutes".
func readableTTL(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%d hours", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%d minutes", d/time.Minute)
	}
	return d.String()
}
