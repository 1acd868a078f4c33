package mail_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/mail"
	"github.com/socialgw/gateway/internal/mailtest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	mailtest.Stop()
	os.Exit(code)
}

func TestSMTPSendsToMailpit(t *testing.T) {
	mp := mailtest.Start(t)
	to := mailtest.Address(t, "smtp")
	s, err := mail.NewSMTP(mp.SMTPURL, "Social <no-reply@social.example>")
	if err != nil {
		t.Fatal(err)
	}
	text := "Hello ünïcode,\n\nthe token below works once.\n\ntoken: v12.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG\n"
	if err := s.Send(context.Background(), mail.Message{Kind: "verify", To: to, Subject: "Confirm your e-mail address", Text: text}); err != nil {
		t.Fatal(err)
	}
	got := mp.Wait(t, to, 1)
	if len(got) != 1 {
		t.Fatalf("%d e-mails, want 1", len(got))
	}
	m := got[0]
	if m.Subject != "Confirm your e-mail address" || m.From.Address != "no-reply@social.example" {
		t.Errorf("subject %q from %q", m.Subject, m.From.Address)
	}
	if tok := mailtest.Token(m); tok != "v12.abcdefghijklmnopqrstuvwxyz0123456789ABCDEFG" {
		t.Errorf("token line read %q from %q", tok, m.Text)
	}
	if !strings.Contains(m.Text, "ünïcode") {
		t.Errorf("text lost its accents: %q", m.Text)
	}
}

func TestSMTPUnreachable(t *testing.T) {
	// A port nobody listens on: the send fails, and says which e-mail.
	s, err := mail.NewSMTP("smtp://127.0.0.1:1", "no-reply@localhost")
	if err != nil {
		t.Fatal(err)
	}
	err = s.Send(context.Background(), mail.Message{Kind: "reset", To: "a@example.com", Subject: "x", Text: "y"})
	if err == nil || !strings.Contains(err.Error(), "reset") {
		t.Fatalf("err = %v, want a failed reset e-mail", err)
	}
}

func TestNewSMTPSettings(t *testing.T) {
	for _, tc := range []struct {
		name, url, from string
		ok              bool
	}{
		{"plain", "smtp://mail.example.com:2525", "no-reply@localhost", true},
		{"credentials", "smtp://user:p%40ss@mail.example.com:587", "no-reply@localhost", true},
		{"tls", "smtps://mail.example.com", "Social <no-reply@social.example>", true},
		{"scheme", "http://mail.example.com", "no-reply@localhost", false},
		{"no host", "smtp://:25", "no-reply@localhost", false},
		{"port", "smtp://mail.example.com:smtp", "no-reply@localhost", false},
		{"sender", "smtp://mail.example.com", "not an address", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := mail.NewSMTP(tc.url, tc.from)
			if (err == nil) != tc.ok {
				t.Fatalf("NewSMTP(%q, %q) = %v, want ok %v", tc.url, tc.from, err, tc.ok)
			}
			if err != nil && strings.Contains(err.Error(), "p@ss") {
				t.Fatalf("error shows the password: %v", err)
			}
		})
	}
}

func TestDirWritesEml(t *testing.T) {
	dir := t.TempDir()
	d := &mail.Dir{Path: dir, From: "no-reply@localhost"}
	path, err := d.Write(mail.Message{Kind: "reset", To: "bob@example.com", Subject: "Reset your password", Text: "token: r3.secret\n"})
	if err != nil {
		t.Fatal(err)
	}
	if filepath.Dir(path) != dir || !strings.Contains(filepath.Base(path), "-reset-") || filepath.Ext(path) != ".eml" {
		t.Errorf("file %s", path)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"To: <bob@example.com>", "Subject: Reset your password", "X-Mail-Kind: reset", "token: r3.secret"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("the .eml lacks %q:\n%s", want, raw)
		}
	}
}
