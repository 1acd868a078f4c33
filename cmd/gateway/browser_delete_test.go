package main

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// TestBrowserSPADeleteAccount drives the reference app's settings page in
// headless Chromium: bob's account deletion with a wrong password shows
// the gateway's message and changes nothing; with his password the app
// signs out, and neither his login nor his token works any more.
func TestBrowserSPADeleteAccount(t *testing.T) {
	_, b, baseURL, headers := spaBrowser(t, 150*time.Second, 8, nil)
	const login = `mutation($l: String!, $p: String!) { login(input: {login: $l, password: $p}) { accessToken } }`

	b.run(t, "log in and open the settings",
		logIn(baseURL, "bob"),
		chromedp.WaitVisible(`#settings-open`, chromedp.ByQuery),
		chromedp.Click(`#settings-open`, chromedp.ByQuery),
		chromedp.WaitVisible(`#delete-account-form input[name=password]`, chromedp.ByQuery),
	)
	var errText string
	b.run(t, "a wrong password",
		chromedp.SendKeys(`#delete-account-form input[name=password]`, "not his password", chromedp.ByQuery),
		chromedp.Click(`#delete-account-form input[name=confirm]`, chromedp.ByQuery),
		chromedp.Click(`#delete-account-form button[type=submit]`, chromedp.ByQuery),
		poll(`document.getElementById('delete-account-error').innerText !== ''`, 20*time.Second),
		chromedp.Evaluate(`document.getElementById('delete-account-error').innerText`, &errText),
	)
	if errText != "the password is wrong" {
		t.Errorf("wrong password: the page says %q", errText)
	}
	if r := gatewaytest.Post(t, baseURL, "", login, map[string]any{"l": "bob", "p": "demo password"}); r.Code() != "" {
		t.Fatalf("a wrong password changed bob's login: %+v", r)
	}
	b.run(t, "his password",
		chromedp.SetValue(`#delete-account-form input[name=password]`, "demo password", chromedp.ByQuery),
		chromedp.Click(`#delete-account-form button[type=submit]`, chromedp.ByQuery),
		chromedp.WaitVisible(`#login input[name=login]`, chromedp.ByQuery),
	)
	if r := gatewaytest.Post(t, baseURL, "", login, map[string]any{"l": "bob", "p": "demo password"}); len(r.Errors) == 0 {
		t.Error("the deleted account still logs in")
	}
	if r := postAs(t, baseURL, bearer(t, headers["bob"]), "after"); r.Status != 401 {
		t.Errorf("the deleted account's token: status %d, want 401", r.Status)
	}
	b.screenshot(t, "spa-deleted.png")
}
