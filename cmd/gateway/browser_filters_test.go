package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserSPAFilters drives the reference app's keyword filters in
// headless Chromium: alice adds a filter for her home timeline, sees it
// listed, and Bob's post holding its word stays out of her timeline while
// his next one shows; a filter with no context is refused with the
// gateway's message and adds nothing; removing the filter empties the
// list, and the list read again agrees.
func TestBrowserSPAFilters(t *testing.T) {
	_, b, baseURL, headers := spaBrowser(t, 150*time.Second, 8, nil)
	const list = `document.getElementById('filter-list')`
	b.run(t, "log in and open the settings",
		logIn(baseURL, "alice"),
		chromedp.WaitVisible(`#settings-open`, chromedp.ByQuery),
		chromedp.Click(`#settings-open`, chromedp.ByQuery),
		poll(list+`.dataset.loaded === 'true' && `+list+`.children.length === 0`, 20*time.Second),
	)
	b.run(t, "add a filter",
		chromedp.SendKeys(`#filter-form input[name=phrase]`, "Kumquat", chromedp.ByQuery),
		chromedp.Click(`#filter-form button[type=submit]`, chromedp.ByQuery),
		poll(list+`.children.length === 1 && `+list+`.innerText.includes('Kumquat')`, 20*time.Second),
	)
	stamp := time.Now().Format(time.StampMilli)
	hidden, shown := fmt.Sprintf("a kumquat at %s", stamp), fmt.Sprintf("a plum at %s", stamp)
	for _, c := range []string{hidden, shown} {
		if r := postAs(t, baseURL, bearer(t, headers["bob"]), c); r.Code() != "" {
			t.Fatalf("bob's post: %+v", r)
		}
	}
	var has bool
	b.run(t, "the filtered post stays out of the timeline",
		chromedp.Reload(),
		poll(fmt.Sprintf(`[...document.querySelectorAll('#posts article.post')].some(a => a.innerText.includes(%q))`, shown), 30*time.Second),
		chromedp.Evaluate(fmt.Sprintf(`[...document.querySelectorAll('#posts article.post')].some(a => a.innerText.includes(%q))`, hidden), &has),
	)
	if has {
		t.Errorf("the timeline shows %q, which the filter hides", hidden)
	}
	var errText string
	b.run(t, "a filter without a context is refused",
		chromedp.Click(`#settings-open`, chromedp.ByQuery),
		poll(list+`.dataset.loaded === 'true' && `+list+`.children.length === 1`, 20*time.Second),
		chromedp.SendKeys(`#filter-form input[name=phrase]`, "nowhere", chromedp.ByQuery),
		chromedp.Click(`#filter-form input[name=context][value=HOME]`, chromedp.ByQuery),
		chromedp.Click(`#filter-form button[type=submit]`, chromedp.ByQuery),
		poll(`document.getElementById('filter-error').innerText !== ''`, 20*time.Second),
		chromedp.Evaluate(`document.getElementById('filter-error').innerText`, &errText),
	)
	if errText != "context must name at least one place" {
		t.Errorf("error %q", errText)
	}
	b.run(t, "remove the filter",
		chromedp.Click(`#filter-list .filter-remove`, chromedp.ByQuery),
		poll(list+`.children.length === 0`, 20*time.Second),
		chromedp.Click(`#settings-open`, chromedp.ByQuery),
		chromedp.Click(`#settings-open`, chromedp.ByQuery),
		poll(list+`.dataset.loaded === 'true' && `+list+`.children.length === 0`, 20*time.Second),
	)
	b.screenshot(t, "spa-filters.png")
}
