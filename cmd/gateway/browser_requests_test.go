package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// TestBrowserSPAFollowRequest drives a follow request through the
// reference app in headless Chromium: alice locks her account with the
// settings' switch; bob, whom she removed as a follower, follows her
// again, which makes a request, and sees none of her posts; alice
// approves him in the Follow requests view; bob then sees her post.
func TestBrowserSPAFollowRequest(t *testing.T) {
	b, baseURL, headers := startSPA(t, 8)
	alice, bob := bearer(t, headers["alice"]), bearer(t, headers["bob"])
	as := func(token, doc string, vars map[string]any) *gatewaytest.Response {
		t.Helper()
		r := gatewaytest.Post(t, baseURL, token, doc, vars)
		if r.Code() != "" {
			t.Fatalf("%s: %+v", doc, r.Errors)
		}
		return r
	}
	aliceID := as(alice, `{ me { id } }`, nil).Str("me.id")
	bobID := as(bob, `{ me { id } }`, nil).Str("me.id")
	as(alice, `mutation($u: ID!) { removeFollower(userId: $u) { id } }`, map[string]any{"u": bobID})

	b.run(t, "alice locks her account in the settings", append(openSettings(baseURL, "alice"),
		chromedp.Click(`#profile-form input[name=locked]`, chromedp.ByQuery),
		chromedp.Click(`#profile-form button[type=submit]`, chromedp.ByQuery),
		poll(`document.getElementById('profile-status').innerText === 'Saved.' || document.getElementById('profile-error').innerText !== ''`, 30*time.Second),
	)...)
	var errText string
	b.eval(t, `document.getElementById('profile-error').innerText`, &errText)
	if errText != "" {
		t.Fatalf("locking: %s", errText)
	}
	if !as(alice, `{ me { locked } }`, nil).Get("me.locked").(bool) {
		t.Fatal("the switch did not lock the account")
	}

	content := fmt.Sprintf("For my followers, at %s", time.Now().Format(time.StampMilli))
	if r := postAs(t, baseURL, alice, content); r.Code() != "" {
		t.Fatalf("alice's post: %+v", r)
	}
	const page = `query($u: ID!) { user(id: $u) { viewerFollows viewerRequestedFollow } userTimeline(userId: $u, first: 5) { edges { node { content } } } }`
	r := as(bob, `mutation($u: ID!) { follow(userId: $u) { viewerFollows viewerRequestedFollow } }`, map[string]any{"u": aliceID})
	if r.Get("follow.viewerFollows") != false || r.Get("follow.viewerRequestedFollow") != true {
		t.Fatalf("bob's follow of locked alice: %+v", r.Data)
	}
	if r := as(bob, page, map[string]any{"u": aliceID}); strings.Contains(fmt.Sprint(r.Data), content) {
		t.Fatalf("bob sees alice's post before she approved: %+v", r.Data)
	}

	b.run(t, "alice approves bob in the requests view",
		chromedp.Click(`#views button[data-view=requests]`, chromedp.ByQuery),
		poll(`document.querySelector('#curation li.request[data-name=bob] button.approve') !== null`, 20*time.Second),
		chromedp.Click(`#curation li.request[data-name=bob] button.approve`, chromedp.ByQuery),
		poll(`document.querySelector('#curation li.request[data-name=bob]') === null && document.querySelector('#curation .empty') !== null`, 20*time.Second),
	)
	b.screenshot(t, "spa-follow-requests.png")
	r = as(bob, page, map[string]any{"u": aliceID})
	if r.Get("user.viewerFollows") != true || r.Get("user.viewerRequestedFollow") != false || !strings.Contains(fmt.Sprint(r.Data), content) {
		t.Fatalf("after the approval, bob reads %+v", r.Data)
	}
}
