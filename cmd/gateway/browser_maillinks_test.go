package main

import (
	"context"
	"io"
	"mime/quotedprintable"
	"net/mail"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// TestBrowserSPAMailLinks drives a password reset through the reference
// app and its e-mail in headless Chromium: alice asks for a reset on the
// login page; the e-mail (an .eml in MAIL_DIR) carries the token and,
// with PUBLIC_URL set, a link to the app whose fragment holds it;
// opening the link fills in the new-password form, and setting the
// password there logs her in. Then the new password logs in over the API
// and the old one fails.
func TestBrowserSPAMailLinks(t *testing.T) {
	mails := t.TempDir()
	const public = "https://social.example"
	ctx, b, baseURL, _ := spaBrowser(t, 150*time.Second, 7, map[string]string{"MAIL_DIR": mails, "PUBLIC_URL": public})

	b.run(t, "ask for a reset on the login page",
		chromedp.Navigate(baseURL+"/app/"),
		chromedp.WaitVisible(`#reset-part summary`, chromedp.ByQuery),
		chromedp.Click(`#reset-part summary`, chromedp.ByQuery),
		chromedp.SendKeys(`#reset-request-form input[name=email]`, "alice@example.com", chromedp.ByQuery),
		chromedp.Click(`#reset-request-form button[type=submit]`, chromedp.ByQuery),
		poll(`document.getElementById('reset-status').textContent !== ''`, 20*time.Second),
	)
	link := resetLink(ctx, t, mails)
	fragment, ok := strings.CutPrefix(link, public+"/app/#reset=")
	if !ok || fragment == "" {
		t.Fatalf("the e-mail's link is %q, want %s/app/#reset=<token>", link, public)
	}

	const newPassword = "reset in the browser 7"
	b.run(t, "open the link and set the new password",
		chromedp.Navigate("about:blank"),
		chromedp.Navigate(baseURL+"/app/#reset="+fragment),
		poll(`document.getElementById('reset-part').open && document.querySelector('#reset-form input[name=token]').value !== '' && location.hash === ''`, 20*time.Second),
		chromedp.SendKeys(`#reset-form input[name=newPassword]`, newPassword, chromedp.ByQuery),
		chromedp.Click(`#reset-form button[type=submit]`, chromedp.ByQuery),
		poll(`!document.getElementById('home').hidden && document.getElementById('who').textContent === '@alice'`, 20*time.Second),
	)
	var errText string
	b.eval(t, `document.getElementById('reset-error').textContent`, &errText)
	if errText != "" {
		t.Errorf("the reset form shows an error: %q", errText)
	}

	login := `mutation($p: String!) { login(input: {login: "alice", password: $p}) { user { name } } }`
	if r := gatewaytest.Post(t, baseURL, "", login, map[string]any{"p": newPassword}); r.Code() != "" || r.Str("login.user.name") != "alice" {
		t.Fatalf("login with the new password: %+v", r)
	}
	if r := gatewaytest.Post(t, baseURL, "", login, map[string]any{"p": "demo password"}); r.Code() == "" {
		t.Fatalf("the old password still logs in: %+v", r)
	}
}

// resetLink waits for the password-reset e-mail in dir and returns its
// "link:" line.
func resetLink(ctx context.Context, t *testing.T, dir string) string {
	t.Helper()
	for ctx.Err() == nil {
		files, _ := filepath.Glob(filepath.Join(dir, "*-reset-*.eml"))
		for _, f := range files {
			if link := mailLine(t, f, "link: "); link != "" {
				return link
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("no reset e-mail with a link in %s", dir)
	return ""
}

// mailLine returns the rest of the body line of an .eml file that starts
// with prefix ("" when none), its body decoded.
func mailLine(t *testing.T, path, prefix string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	m, err := mail.ReadMessage(f)
	if err != nil {
		return "" // still being written
	}
	var body io.Reader = m.Body
	if strings.EqualFold(m.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		body = quotedprintable.NewReader(body)
	}
	raw, err := io.ReadAll(body)
	if err != nil {
		return ""
	}
	for _, l := range strings.Split(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\n") {
		if rest, ok := strings.CutPrefix(l, prefix); ok {
			return strings.TrimSpace(rest)
		}
	}
	return ""
}
