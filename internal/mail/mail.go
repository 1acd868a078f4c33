// Package mail sends account e-mails (address confirmations, password
// resets, change notices): over SMTP with github.com/wneessen/go-mail, or,
// in development, as .eml files in a directory. It knows nothing of
// accounts or tokens: a Message is already written when it gets here.
package mail

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	gomail "github.com/wneessen/go-mail"
)

// Message is one account e-mail.
type Message struct {
	// Kind names the e-mail for logs (verify, change, notice, reset).
	Kind    string
	To      string
	Subject string
	// Text is the plain-text body.
	Text string
}

// Sender delivers messages.
type Sender interface {
	Send(ctx context.Context, m Message) error
}

// build is m as an RFC 5322 message from from: the one encoding both
// senders use, so a development .eml is what SMTP would have carried.
func build(m Message, from string) (*gomail.Msg, error) {
	msg := gomail.NewMsg(gomail.WithEncoding(gomail.EncodingQP))
	if err := msg.From(from); err != nil {
		return nil, fmt.Errorf("sender %q: %w", from, err)
	}
	if err := msg.To(m.To); err != nil {
		return nil, fmt.Errorf("recipient: %w", err)
	}
	msg.Subject(m.Subject)
	msg.SetDate()
	msg.SetMessageID()
	msg.SetGenHeader("X-Mail-Kind", m.Kind)
	msg.SetBodyString(gomail.TypeTextPlain, m.Text)
	return msg, nil
}

// SMTP sends over SMTP.
type SMTP struct {
	client *gomail.Client
	from   string
}

// DefaultTimeout bounds one SMTP conversation (connect, send, quit).
const DefaultTimeout = 15 * time.Second

// NewSMTP returns a sender to the server of rawURL:
// smtp://user:pass@host:port (STARTTLS when the server offers it) or
// smtps://… (TLS from the first byte). Credentials are optional.
func NewSMTP(rawURL, from string) (*SMTP, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, errors.New("SMTP_URL is not a URL")
	}
	opts := []gomail.Option{gomail.WithTimeout(DefaultTimeout)}
	port := 587
	switch u.Scheme {
	case "smtp":
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic))
	case "smtps":
		port = 465
		opts = append(opts, gomail.WithSSL())
	default:
		return nil, fmt.Errorf("SMTP_URL must start with smtp:// or smtps://, not %q", u.Scheme+"://")
	}
	if u.Hostname() == "" {
		return nil, errors.New("SMTP_URL names no host")
	}
	if p := u.Port(); p != "" {
		if port, err = strconv.Atoi(p); err != nil {
			return nil, fmt.Errorf("SMTP_URL port %q is not a number", p)
		}
	}
	opts = append(opts, gomail.WithPort(port))
	if u.User != nil {
		pw, _ := u.User.Password()
		// PLAIN only over TLS (STARTTLS or smtps), as go-mail enforces;
		// the server picks among what it offers otherwise.
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover),
			gomail.WithUsername(u.User.Username()), gomail.WithPassword(pw))
	}
	c, err := gomail.NewClient(u.Hostname(), opts...)
	if err != nil {
		return nil, fmt.Errorf("SMTP client: %w", err)
	}
	if _, err := build(Message{To: "check@example.com"}, from); err != nil {
		return nil, fmt.Errorf("MAIL_FROM: %w", err)
	}
	return &SMTP{client: c, from: from}, nil
}

// Send delivers m in one SMTP conversation.
func (s *SMTP) Send(ctx context.Context, m Message) error {
	msg, err := build(m, s.from)
	if err != nil {
		return err
	}
	if err := s.client.DialAndSendWithContext(ctx, msg); err != nil {
		return fmt.Errorf("send %s e-mail over SMTP: %w", m.Kind, err)
	}
	return nil
}

// Dir writes each message as an .eml file into a directory: development
// without a mail server, where a newcomer opens the file (or reads the
// token the worker logs) to finish a flow.
type Dir struct {
	Path string
	From string
}

// Send writes m to a new file in the directory.
func (d *Dir) Send(_ context.Context, m Message) error {
	_, err := d.Write(m)
	return err
}

// Write writes m to a new file and returns its path.
func (d *Dir) Write(m Message) (string, error) {
	msg, err := build(m, d.From)
	if err != nil {
		return "", err
	}
	var rnd [4]byte
	_, _ = rand.Read(rnd[:])
	name := filepath.Join(d.Path, time.Now().UTC().Format("20060102T150405.000")+"-"+m.Kind+"-"+hex.EncodeToString(rnd[:])+".eml")
	if err := msg.WriteToFile(name); err != nil {
		return "", fmt.Errorf("write %s e-mail: %w", m.Kind, err)
	}
	return name, nil
}

// TempDir makes the default MAIL_DIR: a new directory under the system's
// temporary one.
func TempDir() (string, error) {
	return os.MkdirTemp("", "socialgw-mail-")
}
