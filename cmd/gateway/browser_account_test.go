package main

import (
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// TestBrowserSPAAccount drives the account parts of the reference app's
// settings page in headless Chromium: alice changes her password there
// (the page keeps its session with the new token pair), asks for her data
// and gets the archive's link once the gateway's worker prepared it;
// then, logged out, the old password fails and the new one logs her in,
// in the page and over the API.
func TestBrowserSPAAccount(t *testing.T) {
	_, b, baseURL, _ := spaBrowser(t, 150*time.Second, 8, nil)
	const oldPassword, newPassword = "demo password", "a brand new password 42"
	tryLogin := func(what, password string, then chromedp.Action) {
		b.run(t, what,
			chromedp.WaitVisible(`#login input[name=login]`, chromedp.ByQuery),
			chromedp.Evaluate(`document.getElementById('login').reset()`, nil),
			chromedp.SendKeys(`#login input[name=login]`, "alice", chromedp.ByQuery),
			chromedp.SendKeys(`#login input[name=password]`, password, chromedp.ByQuery),
			chromedp.Click(`#login button[type=submit]`, chromedp.ByQuery),
			then,
		)
	}
	b.run(t, "open the app", chromedp.Navigate(baseURL+"/app/"))
	tryLogin("log in", oldPassword, chromedp.WaitVisible(`#settings-open`, chromedp.ByQuery))
	b.run(t, "open the settings",
		chromedp.Click(`#settings-open`, chromedp.ByQuery),
		poll(`document.getElementById('email-current').innerText.includes('@')`, 20*time.Second),
	)
	b.run(t, "a wrong current password is refused",
		chromedp.SendKeys(`#password-form input[name=currentPassword]`, "not the password", chromedp.ByQuery),
		chromedp.SendKeys(`#password-form input[name=newPassword]`, newPassword, chromedp.ByQuery),
		chromedp.Click(`#password-form button[type=submit]`, chromedp.ByQuery),
		poll(`document.getElementById('password-error').innerText !== ''`, 20*time.Second),
	)
	b.run(t, "change the password",
		chromedp.Evaluate(`document.querySelector('#password-form input[name=currentPassword]').value = ''`, nil),
		chromedp.SendKeys(`#password-form input[name=currentPassword]`, oldPassword, chromedp.ByQuery),
		chromedp.Click(`#password-form button[type=submit]`, chromedp.ByQuery),
		poll(`document.getElementById('password-status').innerText.startsWith('Password changed')`, 30*time.Second),
	)
	var errText string
	b.eval(t, `document.getElementById('password-error').innerText`, &errText)
	if errText != "" {
		t.Fatalf("changing the password: %s", errText)
	}

	// The page's session goes on with the new pair: asking for the data
	// works, and the link comes once the worker prepared the archive.
	b.run(t, "download my data",
		chromedp.Click(`#export-request`, chromedp.ByQuery),
		poll(`document.getElementById('export-part').dataset.status === 'READY' || document.getElementById('export-error').innerText !== ''`, 60*time.Second),
	)
	var zipType string
	b.eval(t, `document.getElementById('export-error').innerText`, &errText)
	if errText != "" {
		t.Fatalf("the export: %s", errText)
	}
	b.run(t, "the link serves the archive",
		chromedp.Evaluate(`fetch(document.getElementById('export-link').href).then(r => r.status + ' ' + r.headers.get('Content-Type'))`, &zipType,
			func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }),
	)
	if zipType != "200 application/zip" {
		t.Errorf("GET the archive's link: %s", zipType)
	}

	b.run(t, "log out", chromedp.Click(`#logout`, chromedp.ByQuery))
	tryLogin("the old password fails", oldPassword, poll(`document.getElementById('login-error').innerText !== ''`, 20*time.Second))
	tryLogin("the new password works", newPassword, chromedp.WaitVisible(`#settings-open`, chromedp.ByQuery))
	const loginDoc = `mutation($p: String!) { login(input: {login: "alice", password: $p}) { accessToken } }`
	if r := gatewaytest.Post(t, baseURL, "", loginDoc, map[string]any{"p": oldPassword}); r.Code() != "BAD_USER_INPUT" && r.Code() != "UNAUTHENTICATED" {
		t.Errorf("login with the old password over the API: %+v", r)
	}
	if r := gatewaytest.Post(t, baseURL, "", loginDoc, map[string]any{"p": newPassword}); r.Code() != "" {
		t.Errorf("login with the new password over the API: %+v", r)
	}
	b.screenshot(t, "spa-account.png")
}
