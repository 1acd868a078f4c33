package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// TestBrowserSPASurvives drives the reference app through what production
// does to a live timeline: access tokens of 5 s that expire again and
// again (the subscription ends with UNAUTHENTICATED, the app refreshes
// and subscribes on a new socket), and a graceful restart of the gateway
// in the middle (the old process completes the streams and closes with
// 1000; a new one starts on the same address and Redis), with posts made
// before the app is back. Every post arrives, once each, in order.
func TestBrowserSPASurvives(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 180*time.Second)
	// Cancelled after the browser's cleanup has closed it gracefully.
	t.Cleanup(cancel)
	if _, err := os.Stat(chromiumPath); err != nil && os.Getenv("REQUIRE_BROWSER") != "1" {
		t.Skipf("skipping: Chromium is not available (%v)", err)
	}
	dist := spaDist(t)
	// The demo's threshold, explicit: the gateway started after the
	// restart runs without --demo and must match the recorded settings.
	g, env, _ := startDemoGateway(t, 14, map[string]string{
		"SPA_DIR": dist, "ACCESS_TOKEN_TTL": "5s", "CELEBRITY_THRESHOLD": "75"})
	baseURL := g.url
	b := newBrowser(ctx, t, baseURL)
	b.run(t, "log in",
		logIn(baseURL, "alice"),
		poll(`document.getElementById('live-status').dataset.state === 'live'`, 30*time.Second),
	)

	var sent []string
	// post publishes a post as bob (with a token of his own: the 5 s
	// ones do not last) and returns its content.
	post := func(what string) string {
		t.Helper()
		token := gatewaytest.Post(t, baseURL, "",
			`mutation { login(input: {login: "bob", password: "demo password"}) { accessToken } }`, nil).Str("login.accessToken")
		c := fmt.Sprintf("%s at %s", what, time.Now().Format(time.StampMilli))
		if r := postAs(t, baseURL, token, c); r.Code() != "" {
			t.Fatalf("bob's post %q: %+v", c, r)
		}
		sent = append(sent, c)
		return c
	}
	shown := func(what, content string) {
		t.Helper()
		b.run(t, what, poll(fmt.Sprintf(
			`[...document.querySelectorAll('#posts article.post .content')].some(c => c.innerText === %q)`, content), 30*time.Second))
	}

	// Three token lifetimes, a post after each.
	for i := range 3 {
		time.Sleep(6 * time.Second)
		shown(fmt.Sprintf("a post after expiry %d", i+1), post(fmt.Sprintf("After expiry %d", i+1)))
	}

	// A graceful restart: the new gateway takes the same address, and two
	// posts are made before the app has subscribed again.
	addr := strings.TrimPrefix(baseURL, "http://")
	if err := g.stop(t); err != nil {
		t.Fatalf("stopping the gateway: %v", err)
	}
	if g2 := launch(t, env, "--listen="+addr); g2.url != baseURL {
		t.Fatalf("the new gateway listens at %s, want %s", g2.url, baseURL)
	}
	post("Right after the restart")
	shown("the posts made while the app was away", post("And another"))
	b.run(t, "live again", poll(`document.getElementById('live-status').dataset.state === 'live'`, 30*time.Second))
	shown("a live post after the restart", post("Live after the restart"))

	var contents []string
	b.eval(t, `[...document.querySelectorAll('#posts article.post .content')].map(c => c.innerText)`, &contents)
	var got []string
	for _, c := range contents {
		if slices.Contains(sent, c) {
			got = append(got, c)
		}
	}
	want := slices.Clone(sent)
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Errorf("bob's posts on alice's page, top first:\n%q\nwant\n%q", got, want)
	}
	var errText string
	b.eval(t, `document.getElementById('home-error').innerText`, &errText)
	if errText != "" {
		t.Errorf("the app shows an error: %q", errText)
	}
}
