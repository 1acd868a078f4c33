package main

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// TestBrowserSPACuration drives the reference app's curation views in
// headless Chromium: alice's 25 bookmarks show 20 at a time, the More
// button bringing the rest; she makes a list in the Lists view, adds bob
// to it by name and opens it, and the list shows the posts of bob's she
// may see, as the gateway pages them.
func TestBrowserSPACuration(t *testing.T) {
	_, b, baseURL, headers := spaBrowser(t, 180*time.Second, 8, nil)
	alice := bearer(t, headers["alice"])

	// 25 bookmarks, newest-bookmarked first in the view.
	home := gatewaytest.Post(t, baseURL, alice, `{ timeline(first: 25) { edges { node { id } } } }`, nil)
	var marked []string
	for i := range 25 {
		id := home.Str(fmt.Sprintf("timeline.edges.%d.node.id", i))
		if id == "" {
			t.Fatalf("alice's home timeline has %d posts, want 25: %+v", i, home)
		}
		if r := gatewaytest.Post(t, baseURL, alice, `mutation($id: ID!) { bookmark(postId: $id) { id } }`, map[string]any{"id": id}); r.Code() != "" {
			t.Fatalf("bookmark %s: %+v", id, r)
		}
		marked = append([]string{id}, marked...)
	}

	const shown = `[...document.querySelectorAll('#curation .view-posts article.post')]`
	b.run(t, "log in and open the bookmarks, 20 at a time",
		logIn(baseURL, "alice"),
		poll(`document.querySelectorAll('#posts article.post').length >= 1`, 20*time.Second),
		chromedp.Click(`#views button[data-view=bookmarks]`, chromedp.ByQuery),
		poll(shown+`.length === 20 && !document.querySelector('#curation button.more').hidden`, 20*time.Second),
		chromedp.Click(`#curation button.more`, chromedp.ByQuery),
		poll(shown+`.length === 25 && document.querySelector('#curation button.more').hidden`, 20*time.Second),
	)
	var ids []string
	b.eval(t, shown+`.map((a) => a.dataset.id)`, &ids)
	if !slices.Equal(ids, marked) {
		t.Fatalf("the bookmarks view shows %v, want %v", ids, marked)
	}

	b.run(t, "make a list, add bob and open it",
		chromedp.Click(`#views button[data-view=lists]`, chromedp.ByQuery),
		poll(`document.querySelector('#curation form.create-list') !== null`, 20*time.Second),
		chromedp.SendKeys(`#curation form.create-list input[name=listTitle]`, "Friends", chromedp.ByQuery),
		chromedp.Click(`#curation form.create-list button[type=submit]`, chromedp.ByQuery),
		poll(`document.querySelector('#curation li.list[data-title=Friends]') !== null`, 20*time.Second),
		chromedp.SendKeys(`#curation li.list[data-title=Friends] form.add-member input[name=member]`, "@bob", chromedp.ByQuery),
		chromedp.Click(`#curation li.list[data-title=Friends] form.add-member button[type=submit]`, chromedp.ByQuery),
		poll(`[...document.querySelectorAll('#curation li.list[data-title=Friends] ul.members li')].some((li) => li.textContent.startsWith('@bob'))`, 20*time.Second),
		chromedp.Click(`#curation li.list[data-title=Friends] button.open-list`, chromedp.ByQuery),
		poll(shown+`.length > 0`, 20*time.Second),
	)
	b.eval(t, shown+`.map((a) => a.dataset.id)`, &ids)

	// What the app shows is the gateway's first page of the list, all of
	// it bob's, none hidden from alice.
	lists := gatewaytest.Post(t, baseURL, alice, `{ lists { id title } }`, nil)
	if lists.Str("lists.0.title") != "Friends" {
		t.Fatalf("alice's lists: %+v", lists)
	}
	page := gatewaytest.Post(t, baseURL, alice, `query($id: ID!) { listTimeline(listId: $id, first: 20) { edges { node { id author { name } } } } }`,
		map[string]any{"id": lists.Str("lists.0.id")})
	var want []string
	for i := 0; page.Str(fmt.Sprintf("listTimeline.edges.%d.node.id", i)) != ""; i++ {
		if a := page.Str(fmt.Sprintf("listTimeline.edges.%d.node.author.name", i)); a != "bob" {
			t.Fatalf("the list shows a post of %s", a)
		}
		want = append(want, page.Str(fmt.Sprintf("listTimeline.edges.%d.node.id", i)))
	}
	if len(want) == 0 || !slices.Equal(ids, want) {
		t.Fatalf("the list view shows %v, the gateway's page is %v", ids, want)
	}
	var errText string
	b.eval(t, `document.getElementById('home-error').innerText`, &errText)
	if errText != "" {
		t.Errorf("the app shows an error: %q", errText)
	}
	b.screenshot(t, "spa-curation.png")
}
