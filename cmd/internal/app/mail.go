package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"time"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/mail"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// Mail are the settings of account e-mails, shared by the gateway and the
// worker: both run workers of the mail queue, which make the tokens and
// send the e-mails.
type Mail struct {
	SMTPURL string
	From    string
	// Dir receives the e-mails as .eml files when SMTPURL is empty.
	Dir string
	// ResetTTL is how long a password-reset token works.
	ResetTTL time.Duration
	// PublicURL is the gateway's public address, for the links in the
	// e-mails (empty: none).
	PublicURL string
}

// Settings binds the mail settings.
func (m *Mail) Settings() []Setting {
	return []Setting{
		String(&m.SMTPURL, "smtp-url", "SMTP_URL", "", "smtp://user:pass@host:port (STARTTLS when offered) or smtps://…: where account e-mails (verification, password reset, e-mail change) are sent; empty in development: each e-mail is written as an .eml file to MAIL_DIR and its token logged; required with PRODUCTION=true"),
		String(&m.From, "mail-from", "MAIL_FROM", "no-reply@localhost", "the sender of account e-mails"),
		String(&m.Dir, "mail-dir", "MAIL_DIR", "", "directory the account e-mails are written to when SMTP_URL is empty (created if missing); empty: a temporary directory, logged at start-up"),
		Duration(&m.ResetTTL, "reset-token-ttl", "RESET_TOKEN_TTL", "30m", "how long a password-reset token works (it works once)"),
		String(&m.PublicURL, "public-url", "PUBLIC_URL", "", "the gateway's public address (https://host[:port]); when set, account e-mails carry, beside the token, a link to the reference app (/app/, served with SPA_DIR) that fills it in"),
	}
}

// Check reports settings that cannot work.
func (m *Mail) Check() error {
	var errs []error
	if m.ResetTTL <= 0 {
		errs = append(errs, errors.New("RESET_TOKEN_TTL must be positive"))
	}
	if m.PublicURL != "" {
		u, err := url.Parse(m.PublicURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			errs = append(errs, fmt.Errorf("PUBLIC_URL %q: want an address like https://social.example", m.PublicURL))
		}
	}
	if m.SMTPURL != "" {
		if _, err := mail.NewSMTP(m.SMTPURL, m.From); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Sender opens where the e-mails go: the SMTP server, or, without one,
// the directory (made, and logged, here). files says the latter: the
// worker then logs each token, so a newcomer can finish every flow.
func (m *Mail) Sender(log *slog.Logger) (s mail.Sender, files bool, err error) {
	if m.SMTPURL != "" {
		s, err := mail.NewSMTP(m.SMTPURL, m.From)
		return s, false, err
	}
	dir := m.Dir
	if dir == "" {
		if dir, err = mail.TempDir(); err != nil {
			return nil, false, fmt.Errorf("mail directory: %w", err)
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, false, fmt.Errorf("mail directory: %w", err)
	}
	log.Warn("no SMTP_URL: account e-mails are written to files in MAIL_DIR, and their tokens logged", "dir", dir)
	return &mail.Dir{Path: dir, From: m.From}, true, nil
}

// mailGroup is the consumer group of the mail queue.
const mailGroup = "mail"

// NewMailWorker returns a worker of the mail queue: the fan-out queue's
// worker (internal/fanout) on a stream of its own, so that a slow mail
// server, whose sends are retried with a backoff inside the job, never
// holds up the delivery of posts.
func NewMailWorker(store *redisstore.MailService, accounts social.AccountStore, cfg Mail, log *slog.Logger) (*fanout.Worker, error) {
	sender, files, err := cfg.Sender(log)
	if err != nil {
		return nil, err
	}
	m := &auth.Mailer{Store: store, Accounts: accounts, Sender: sender, Log: log,
		ResetTTL: cfg.ResetTTL, LogTokens: files, PublicURL: cfg.PublicURL}
	stream, dead, alive := store.MailQueue()
	return fanout.New(store.Client(), fanout.Config{
		Stream: stream, Dead: dead, Alive: alive, Group: mailGroup,
		// A job tries its sends for about a minute (auth.Mailer); it is
		// claimed again only when its worker died.
		MinIdle: 5 * time.Minute, Concurrency: 2, JobTimeout: 3 * time.Minute,
	}, m.Handle, log)
}

// StartMail runs w until ctx ends, and with it, every sweepEvery, the
// sweep of address reservations whose change was never confirmed; stop
// waits, at most timeout, for the e-mails it is sending.
func StartMail(ctx context.Context, w *fanout.Worker, store *redisstore.MailService, log *slog.Logger) (stop func(timeout time.Duration)) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil {
			log.Error("mail worker failed", "err", err)
		}
	}()
	go every(ctx, sweepEvery, func() {
		n, err := store.SweepEmailReservations(ctx, time.Now(), 1000)
		if err != nil && ctx.Err() == nil {
			log.Warn("sweep of expired e-mail reservations failed; the next sweep tries again", "err", err)
		} else if n > 0 {
			log.Info("freed the addresses of e-mail changes never confirmed", "freed", n)
		}
	})
	return func(timeout time.Duration) {
		cancel()
		select {
		case <-done:
		case <-time.After(timeout):
			log.Warn("mail worker still busy at shutdown; its e-mails will be claimed again")
		}
	}
}
