package auth_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/mail"
	"github.com/socialgw/gateway/internal/social"
)

// tokenStore is the part of a MailStore the Mailer uses.
type tokenStore struct {
	auth.MailStore
	mu     sync.Mutex
	saved  []social.MailToken
	emails map[string]string
}

func (s *tokenStore) SaveMailToken(_ context.Context, _, _ string, t social.MailToken) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saved = append(s.saved, t)
	return nil
}

func (s *tokenStore) UserIDByEmail(_ context.Context, email string) (string, error) {
	if id, ok := s.emails[strings.ToLower(email)]; ok {
		return id, nil
	}
	return "", social.Errorf(social.NotFound, "no account")
}

// flakySender fails its first fail sends, and records when each came.
type flakySender struct {
	fail int
	at   []time.Time
	sent []mail.Message
}

func (f *flakySender) Send(_ context.Context, m mail.Message) error {
	f.at = append(f.at, time.Now())
	if len(f.at) <= f.fail {
		return errors.New("451 try again later")
	}
	f.sent = append(f.sent, m)
	return nil
}

// The Mailer retries a failed send with an exponential backoff; a mail
// that fails every attempt is logged with its kind and user, never its
// token, and the job ends (the queue does not run it again).
func TestMailerRetries(t *testing.T) {
	for _, tc := range []struct {
		name      string
		fail      int
		wantSent  bool
		wantWaits []time.Duration
	}{
		{"first try", 0, true, nil},
		{"third try", 2, true, []time.Duration{time.Second, 2 * time.Second}},
		{"never", 10, false, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				accounts := newMemStore()
				u, _ := accounts.CreateUser(context.Background(), social.NewAccount{Name: "ann", Email: "ann@example.com"})
				store := &tokenStore{emails: map[string]string{"ann@example.com": u.ID}}
				sender := &flakySender{fail: tc.fail}
				var logs bytes.Buffer
				m := &auth.Mailer{Store: store, Accounts: accounts, Sender: sender, Attempts: 4, Backoff: time.Second,
					Log: slog.New(slog.NewTextHandler(&logs, nil))}
				err := m.Handle(context.Background(), map[string]string{"kind": "reset", "to": "Ann@example.com"})
				if err != nil {
					t.Fatalf("Handle: %v", err)
				}
				var waits []time.Duration
				for i := 1; i < len(sender.at); i++ {
					waits = append(waits, sender.at[i].Sub(sender.at[i-1]))
				}
				if !equalDurations(waits, tc.wantWaits) {
					t.Errorf("waits %v, want %v", waits, tc.wantWaits)
				}
				if (len(sender.sent) == 1) != tc.wantSent {
					t.Fatalf("sent %d", len(sender.sent))
				}
				if len(store.saved) != 1 {
					t.Fatalf("%d tokens stored, want 1", len(store.saved))
				}
				out := logs.String()
				if tc.wantSent {
					tok := tokenOf(sender.sent[0].Text)
					if tok == "" || store.saved[0].Hash == tok || strings.Contains(store.saved[0].Hash, tok) {
						t.Fatalf("token %q stored as %q", tok, store.saved[0].Hash)
					}
					if strings.Contains(out, tok) {
						t.Errorf("the log holds the token: %s", out)
					}
					return
				}
				if !strings.Contains(out, "account e-mail not sent") || !strings.Contains(out, "kind=reset") || !strings.Contains(out, "user="+u.ID) {
					t.Errorf("final failure log: %s", out)
				}
				if strings.Contains(out, "token") {
					t.Errorf("the log mentions a token: %s", out)
				}
			})
		})
	}
}

func tokenOf(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if t, ok := strings.CutPrefix(l, "token: "); ok {
			return t
		}
	}
	return ""
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// A reset for an address no account has, or a job for an account that
// is gone, mails nothing and ends the job.
func TestMailerNothingToSend(t *testing.T) {
	accounts := newMemStore()
	store := &tokenStore{emails: map[string]string{}}
	sender := &flakySender{}
	m := &auth.Mailer{Store: store, Accounts: accounts, Sender: sender}
	for _, job := range []map[string]string{
		{"kind": "reset", "to": "nobody@example.com"},
		{"kind": "verify", "user": "42", "to": "gone@example.com"},
	} {
		if err := m.Handle(context.Background(), job); err != nil {
			t.Fatalf("%v: %v", job, err)
		}
	}
	if len(sender.at) != 0 || len(store.saved) != 0 {
		t.Fatalf("sent %d, stored %d tokens", len(sender.at), len(store.saved))
	}
}

// The development mode logs each token with its e-mail.
func TestMailerLogsTokensInDevelopment(t *testing.T) {
	accounts := newMemStore()
	u, _ := accounts.CreateUser(context.Background(), social.NewAccount{Name: "ann", Email: "ann@example.com"})
	sender := &flakySender{}
	var logs bytes.Buffer
	m := &auth.Mailer{Store: &tokenStore{}, Accounts: accounts, Sender: sender, LogTokens: true,
		Log: slog.New(slog.NewTextHandler(&logs, nil))}
	if err := m.Handle(context.Background(), map[string]string{"kind": "verify", "user": u.ID, "to": u.Email}); err != nil {
		t.Fatal(err)
	}
	if tok := tokenOf(sender.sent[0].Text); tok == "" || !strings.Contains(logs.String(), "token="+tok) {
		t.Fatalf("token %q not in the log: %s", tok, logs.String())
	}
}

// With PublicURL an e-mail that carries a token carries a link to the
// reference app with the token in its fragment; without, only the token.
func TestMailerAppLink(t *testing.T) {
	accounts := newMemStore()
	u, _ := accounts.CreateUser(context.Background(), social.NewAccount{Name: "ann", Email: "ann@example.com"})
	for _, tc := range []struct {
		kind, public, want string // want: the link with TOKEN for the token
	}{
		{"verify", "", ""},
		{"verify", "https://social.example", "https://social.example/app/#verify=TOKEN"},
		{"reset", "https://social.example/", "https://social.example/app/#reset=TOKEN"},
		{"change", "http://localhost:8080", "http://localhost:8080/app/#verify=TOKEN"},
	} {
		t.Run(tc.kind+" "+tc.public, func(t *testing.T) {
			sender := &flakySender{}
			m := &auth.Mailer{Store: &tokenStore{emails: map[string]string{"ann@example.com": u.ID}}, Accounts: accounts, Sender: sender, PublicURL: tc.public}
			if err := m.Handle(context.Background(), map[string]string{"kind": tc.kind, "user": u.ID, "to": u.Email, "new": "new@example.com"}); err != nil {
				t.Fatal(err)
			}
			text := sender.sent[0].Text
			tok := tokenOf(text)
			want := strings.ReplaceAll(tc.want, "TOKEN", tok)
			if got := linkOf(text); tok == "" || got != want {
				t.Fatalf("link %q, want %q in:\n%s", got, want, text)
			}
		})
	}
}

// linkOf is the "link: …" line of an e-mail ("" when none).
func linkOf(text string) string {
	for _, l := range strings.Split(text, "\n") {
		if rest, ok := strings.CutPrefix(l, "link: "); ok {
			return rest
		}
	}
	return ""
}
