package main

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// TestBrowserSPAConversation drives the reference app's conversation
// features in headless Chromium: alice posts behind a content warning
// (shown collapsed), edits the post (shown in place, marked edited, its
// earlier version kept), comments on it and answers her comment (the
// answer shows under it, saying whom it answers).
func TestBrowserSPAConversation(t *testing.T) {
	_, b, baseURL, headers := spaBrowser(t, 180*time.Second, 9, nil)

	content := fmt.Sprintf("Who dies at the end? (%s)", time.Now().Format(time.StampMilli))
	const top = `document.querySelector('#posts article.post')`
	b.run(t, "log in and post behind a content warning",
		logIn(baseURL, "alice"),
		poll(`document.querySelectorAll('#posts article.post').length >= 1`, 20*time.Second),
		chromedp.SendKeys(`#compose textarea[name=content]`, content, chromedp.ByQuery),
		chromedp.SendKeys(`#compose input[name=spoiler]`, "the ending", chromedp.ByQuery),
		chromedp.Click(`#compose button[type=submit]`, chromedp.ByQuery),
		poll(fmt.Sprintf(`(() => {
			const a = %s;
			const cw = a && a.querySelector('details.cw');
			return cw !== null && !cw.open && cw.querySelector('summary').textContent === 'CW: the ending' &&
				a.querySelector('.content').textContent === %q;
		})()`, top, content), 20*time.Second),
	)
	var id string
	b.eval(t, top+`.dataset.id`, &id)

	const edited = "Nobody dies, edited in the browser"
	b.run(t, "edit the post",
		chromedp.Click(`#posts article.post button.edit`, chromedp.ByQuery),
		poll(top+`.querySelector('form.edit-form') !== null`, 10*time.Second),
		chromedp.Evaluate(fmt.Sprintf(`(() => {
			const f = %s.querySelector('form.edit-form');
			f.content.value = %q;
			f.spoiler.value = '';
		})()`, top, edited), nil),
		chromedp.Click(`#posts article.post form.edit-form button[type=submit]`, chromedp.ByQuery),
		poll(fmt.Sprintf(`(() => {
			const a = %s;
			return a.dataset.id === %q && a.querySelector('.content').textContent === %q && a.querySelector('details.cw') === null &&
				a.querySelector('.edited-at').innerText.includes('edited') && a.querySelector('form.edit-form') === null;
		})()`, top, id, edited), 20*time.Second),
	)

	const comment, answer = "A first comment", "And its answer"
	b.run(t, "comment, then answer the comment",
		chromedp.SendKeys(`#posts article.post > form input[name=content]`, comment, chromedp.ByQuery),
		chromedp.Click(`#posts article.post > form button[type=submit]`, chromedp.ByQuery),
		poll(fmt.Sprintf(`%s.querySelector('.comments li.comment .text')?.innerText === %q`, top, comment), 10*time.Second),
		chromedp.Click(`#posts article.post .comments li.comment button.reply`, chromedp.ByQuery),
		poll(top+`.querySelector('.comments form.answer-form') !== null`, 10*time.Second),
		chromedp.SendKeys(`#posts article.post .comments form.answer-form input[name=content]`, answer, chromedp.ByQuery),
		chromedp.Click(`#posts article.post .comments form.answer-form button[type=submit]`, chromedp.ByQuery),
		poll(fmt.Sprintf(`(() => {
			const li = %s.querySelector('.comments li.comment .answers li.comment');
			return li !== null && li.querySelector('.text').innerText === %q && li.querySelector('.to').innerText.includes('@alice') &&
				%s.querySelector('.comment-count').innerText === '2 comments';
		})()`, top, answer, top), 10*time.Second),
	)
	var errText string
	b.eval(t, `document.getElementById('home-error').innerText`, &errText)
	if errText != "" {
		t.Errorf("the app shows an error: %q", errText)
	}

	// What the app did is what the gateway holds.
	r := gatewaytest.Post(t, baseURL, bearer(t, headers["bob"]), `query($id: ID!) { post(id: $id) { content spoilerText editedAt
	  edits { content spoilerText } comments(first: 5) { edges { node { content inReplyTo { content }
	    replies { edges { node { content } } } } } } } }`, map[string]any{"id": id})
	if r.Code() != "" || r.Str("post.content") != edited || r.Get("post.spoilerText") != nil || r.Get("post.editedAt") == nil ||
		r.Str("post.edits.0.content") != content || r.Str("post.edits.0.spoilerText") != "the ending" ||
		r.Str("post.comments.edges.0.node.content") != answer || r.Str("post.comments.edges.0.node.inReplyTo.content") != comment ||
		r.Str("post.comments.edges.1.node.replies.edges.0.node.content") != answer {
		t.Fatalf("the post as the gateway holds it: %+v", r)
	}
	b.screenshot(t, "spa-conversation.png")
}
