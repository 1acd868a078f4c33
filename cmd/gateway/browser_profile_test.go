package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestBrowserSPAProfile drives the reference app's settings page in
// headless Chromium: alice sets a display name and uploads an avatar and
// a header; the page shows the copies the gateway cropped and scaled
// (the avatar a 96-pixel square from a wide image); a file that is not an
// image is refused with the gateway's message and changes nothing; her
// next post shows her display name and 48-pixel avatar.
func TestBrowserSPAProfile(t *testing.T) {
	b, baseURL, headers := startSPA(t, 15)
	dir := t.TempDir()
	avatar, header, notImage := filepath.Join(dir, "me.png"), filepath.Join(dir, "wide.png"), filepath.Join(dir, "fake.png")
	writeTestPNG(t, avatar, 300, 200)
	writeTestPNG(t, header, 1200, 300)
	if err := os.WriteFile(notImage, []byte("this is text, not a picture"), 0o644); err != nil {
		t.Fatal(err)
	}

	const preview = `document.querySelector('#profile-preview img.avatar')`
	b.run(t, "log in and open the settings", openSettings(baseURL, "alice")...)
	b.run(t, "upload an avatar and a header",
		chromedp.SendKeys(`#profile-form input[name=displayName]`, "Alice Liddell", chromedp.ByQuery),
		chromedp.SetUploadFiles(`#profile-form input[name=avatar]`, []string{avatar}, chromedp.ByQuery),
		chromedp.SetUploadFiles(`#profile-form input[name=header]`, []string{header}, chromedp.ByQuery),
		chromedp.Click(`#profile-form button[type=submit]`, chromedp.ByQuery),
		poll(`document.getElementById('profile-status').innerText === 'Saved.' || document.getElementById('profile-error').innerText !== ''`, 30*time.Second),
	)
	var errText string
	b.eval(t, `document.getElementById('profile-error').innerText`, &errText)
	if errText != "" {
		t.Fatalf("saving the profile: %s", errText)
	}
	b.run(t, "the scaled copies load",
		poll(preview+` && `+preview+`.complete && `+preview+`.naturalWidth === 96 && `+preview+`.naturalHeight === 96`, 20*time.Second),
		poll(`(() => { const h = document.querySelector('#profile-preview img.header'); return h && h.complete && h.naturalWidth === 600 && h.naturalHeight === 150; })()`, 20*time.Second),
	)
	var shown, name string
	b.eval(t, preview+`.src`, &shown)
	b.eval(t, `document.querySelector('#profile-form input[name=displayName]').value`, &name)
	if name != "Alice Liddell" {
		t.Errorf("the form shows the display name %q", name)
	}

	b.run(t, "a file that is not an image",
		chromedp.SetUploadFiles(`#profile-form input[name=avatar]`, []string{notImage}, chromedp.ByQuery),
		chromedp.Click(`#profile-form button[type=submit]`, chromedp.ByQuery),
		poll(`document.getElementById('profile-error').innerText !== ''`, 20*time.Second),
		chromedp.Evaluate(`document.getElementById('profile-error').innerText`, &errText),
	)
	if want := "not an image"; !strings.Contains(errText, want) {
		t.Errorf("error %q, want one saying %q", errText, want)
	}
	var still string
	b.eval(t, preview+`.src`, &still)
	if still != shown {
		t.Errorf("a refused upload changed the avatar shown: %s, was %s", still, shown)
	}

	content := fmt.Sprintf("With a face at %s", time.Now().Format(time.StampMilli))
	if r := postAs(t, baseURL, bearer(t, headers["alice"]), content); r.Code() != "" {
		t.Fatalf("alice's post: %+v", r)
	}
	b.run(t, "her post shows her display name and avatar",
		chromedp.Reload(),
		poll(fmt.Sprintf(`(() => {
			const a = [...document.querySelectorAll('#posts article.post')].find(a => a.innerText.includes(%q));
			if (!a) return false;
			const img = a.querySelector('.meta img.avatar');
			return img !== null && img.complete && img.naturalWidth === 48 && a.querySelector('.display-name')?.innerText.trim() === 'Alice Liddell';
		})()`, content), 30*time.Second),
	)
	b.screenshot(t, "spa-profile.png")
}

// startSPA starts the demo gateway on database db serving the reference
// app, and a browser on it (the test is skipped without Chromium).
func startSPA(t *testing.T, db int) (b *browser, baseURL string, headers map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 150*time.Second)
	t.Cleanup(cancel)
	if _, err := os.Stat(chromiumPath); err != nil && os.Getenv("REQUIRE_BROWSER") != "1" {
		t.Skipf("skipping: Chromium is not available (%v)", err)
	}
	dist := spaDist(t)
	baseURL, headers = startDemo(t, db, map[string]string{"SPA_DIR": dist})
	return newBrowser(ctx, t, baseURL), baseURL, headers
}

// openSettings logs a demo user in and opens the settings page, its
// profile form loaded.
func openSettings(baseURL, name string) []chromedp.Action {
	return []chromedp.Action{
		logIn(baseURL, name),
		chromedp.WaitVisible(`#settings-open`, chromedp.ByQuery),
		chromedp.Click(`#settings-open`, chromedp.ByQuery),
		chromedp.WaitVisible(`#profile-form input[name=displayName]`, chromedp.ByQuery),
		poll(`document.getElementById('profile-form').dataset.loaded === 'true'`, 20*time.Second),
	}
}
