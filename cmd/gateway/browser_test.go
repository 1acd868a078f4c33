package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io/fs"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redistest"
)

// chromiumPath is where the Debian package chromium installs the browser.
const chromiumPath = "/usr/bin/chromium"

// browser is a headless Chromium watching what its page does: requests to
// another origin than the gateway, failed requests (a missing favicon
// included), Content-Security-Policy violations and uncaught exceptions
// fail the test; other errors the page logs are reported.
type browser struct {
	ctx context.Context

	mu       sync.Mutex
	posts    []request // the requests with a body the page sent
	failures []string
	notes    []string
}

// newBrowser starts Chromium for a page served at baseURL, or skips the
// test without Chromium (fails instead when REQUIRE_BROWSER=1).
func newBrowser(ctx context.Context, t *testing.T, baseURL string) *browser {
	t.Helper()
	redistest.Slow(t, "drives Chromium")
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("REQUIRE_BROWSER") == "1" {
			t.Fatalf("REQUIRE_BROWSER=1, but Chromium is not available: %v", err)
		}
		t.Skipf("skipping: Chromium is not available (%v); install the Debian package chromium, "+
			"or set REQUIRE_BROWSER=1 to make this a failure", err)
	}
	base, err := url.Parse(baseURL)
	if err != nil {
		t.Fatalf("base URL %q: %v", baseURL, err)
	}
	// Not t.TempDir: Chromium's helpers may still write to the profile for
	// a moment after the browser closed, and t.TempDir fails the test when
	// it cannot remove it.
	profile, err := os.MkdirTemp("", "chromium-profile-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for range 20 {
			if os.RemoveAll(profile) == nil {
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
		t.Logf("could not remove the Chromium profile %s", profile)
	})
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromiumPath),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		// The machine may have no network: keep Chromium from trying to
		// reach Google's services, or it stalls on refused connections.
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 800),
	)...)
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	b := &browser{ctx: browserCtx}
	t.Cleanup(func() {
		// Close the browser gracefully, so that it has stopped writing to
		// its profile before t.TempDir is removed.
		if err := chromedp.Cancel(browserCtx); err != nil {
			t.Logf("closing Chromium: %v", err)
		}
		cancelBrowser()
		cancelAlloc()
		b.mu.Lock()
		defer b.mu.Unlock()
		for _, n := range b.notes {
			t.Logf("browser: %s", n)
		}
		for _, f := range b.failures {
			t.Errorf("browser: %s", f)
		}
	})
	urls := map[network.RequestID]string{}
	chromedp.ListenTarget(browserCtx, func(ev any) {
		b.mu.Lock()
		defer b.mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			u, err := url.Parse(ev.Request.URL)
			if err == nil && (u.Scheme == "data" || u.Scheme == "blob" || u.Scheme == "about") {
				return
			}
			urls[ev.RequestID] = ev.Request.URL
			if err != nil || u.Host != base.Host {
				b.failures = append(b.failures, "request outside the gateway: "+ev.Request.URL)
			}
			for _, e := range ev.Request.PostDataEntries {
				if body, err := base64.StdEncoding.DecodeString(e.Bytes); err == nil {
					b.posts = append(b.posts, request{time.Now(), string(body)})
				}
			}
		case *network.EventResponseReceived:
			if ev.Response.Status >= 400 && !strings.HasSuffix(ev.Response.URL, ".map") {
				b.failures = append(b.failures, fmt.Sprintf("%s answered %d", ev.Response.URL, int(ev.Response.Status)))
			}
		case *network.EventLoadingFailed:
			if !ev.Canceled {
				b.notes = append(b.notes, fmt.Sprintf("loading %s failed: %s", urls[ev.RequestID], ev.ErrorText))
			}
		case *runtime.EventExceptionThrown:
			b.failures = append(b.failures, "uncaught exception: "+ev.ExceptionDetails.Error())
		case *log.EventEntryAdded:
			msg := fmt.Sprintf("%s %s: %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			switch {
			case ev.Entry.Source == log.SourceSecurity:
				b.failures = append(b.failures, msg)
			case ev.Entry.Level == log.LevelError:
				b.notes = append(b.notes, msg)
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				b.notes = append(b.notes, "console.error: "+strings.Join(args, " "))
			}
		}
	})
	return b
}

// request is a request body the page sent, and when.
type request struct {
	at   time.Time
	body string
}

// sent returns the requests with a body the page has sent so far.
func (b *browser) sent() []request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]request(nil), b.posts...)
}

// run runs actions in the browser; on failure it reports the page's text.
func (b *browser) run(t *testing.T, what string, actions ...chromedp.Action) {
	t.Helper()
	if err := chromedp.Run(b.ctx, actions...); err != nil {
		var text string
		_ = chromedp.Run(b.ctx, chromedp.Evaluate(`document.body ? document.body.innerText.slice(0, 2000) : ''`, &text))
		t.Fatalf("%s: %v\npage text:\n%s", what, err, text)
	}
}

// eval evaluates a JavaScript expression into out.
func (b *browser) eval(t *testing.T, expr string, out any) {
	t.Helper()
	b.run(t, "evaluate "+expr, chromedp.Evaluate(expr, out))
}

// poll waits until a JavaScript expression is true.
func poll(expr string, timeout time.Duration) chromedp.Action {
	return chromedp.Poll(expr, nil, chromedp.WithPollingTimeout(timeout))
}

// screenshot saves the page under the test's artifact directory (kept
// with `go test -artifacts`).
func (b *browser) screenshot(t *testing.T, name string) {
	t.Helper()
	var png []byte
	b.run(t, "screenshot", chromedp.CaptureScreenshot(&png))
	file := filepath.Join(t.ArtifactDir(), name)
	if err := os.WriteFile(file, png, 0o644); err != nil {
		t.Errorf("write screenshot: %v", err)
	} else {
		t.Logf("screenshot: %s", file)
	}
}

// spaBrowser is the start of a browser test of the reference app: within
// timeout, a demo gateway on database db serving the built app (SPA_DIR,
// besides env) and a headless Chromium on it; the test is skipped when
// Chromium is missing, unless REQUIRE_BROWSER=1. It returns the test's
// context, the browser, the gateway's base URL and the demo users'
// Headers lines.
func spaBrowser(t *testing.T, timeout time.Duration, db int, env map[string]string) (context.Context, *browser, string, map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	t.Cleanup(cancel)
	if _, err := os.Stat(chromiumPath); err != nil && os.Getenv("REQUIRE_BROWSER") != "1" {
		t.Skipf("skipping: Chromium is not available (%v)", err)
	}
	all := map[string]string{"SPA_DIR": spaDist(t)}
	for k, v := range env {
		all[k] = v
	}
	baseURL, headers := startDemo(t, db, all)
	return ctx, newBrowser(ctx, t, baseURL), baseURL, headers
}

// logIn opens the reference app at baseURL and logs in as the demo user
// name (every demo user's password is "demo password"), with a click on
// the submit button, not form.submit(), which skips the submit event.
func logIn(baseURL, name string) chromedp.Tasks {
	return chromedp.Tasks{
		chromedp.Navigate(baseURL + "/app/"),
		chromedp.WaitVisible(`#login input[name=login]`, chromedp.ByQuery),
		chromedp.SendKeys(`#login input[name=login]`, name, chromedp.ByQuery),
		chromedp.SendKeys(`#login input[name=password]`, "demo password", chromedp.ByQuery),
		chromedp.Click(`#login button[type=submit]`, chromedp.ByQuery),
	}
}

// startDemo runs the gateway with --demo on database db of the test Redis
// until the test ends, and returns its base URL and alice's and bob's
// Headers lines from the log.
func startDemo(t *testing.T, db int, env map[string]string) (baseURL string, headers map[string]string) {
	t.Helper()
	g, _, headers := startDemoGateway(t, db, env)
	return g.url, headers
}

// startDemoGateway is startDemo that also returns the gateway and its
// environment, for a test that restarts it.
func startDemoGateway(t *testing.T, db int, env map[string]string) (g *running, all, headers map[string]string) {
	t.Helper()
	all = emptyDB(t, db)
	all["JWT_SECRET"] = testSecret
	for k, v := range env {
		all[k] = v
	}
	g = launch(t, all, "--demo")
	headers = map[string]string{}
	for _, m := range headersRE.FindAllStringSubmatch(g.out.String(), -1) {
		headers[m[1]] = m[2]
	}
	if headers["alice"] == "" || headers["bob"] == "" {
		t.Fatalf("no Headers lines in the log:\n%s", g.out)
	}
	return g, all, headers
}

// bearer returns the access token of a Headers line.
func bearer(t *testing.T, headersLine string) string {
	t.Helper()
	var h map[string]string
	if err := json.Unmarshal([]byte(headersLine), &h); err != nil {
		t.Fatal(err)
	}
	return strings.TrimPrefix(h["Authorization"], "Bearer ")
}

// TestBrowserGraphiQL opens GraphiQL on a demo gateway in headless
// Chromium: it opens with the example tabs; with alice's Headers line
// pasted into the Headers tab, the home-timeline tab runs and shows her
// timeline, and the CreatePost tab runs with the same headers; running
// Login puts its token into the headers; the access token appears neither
// in the page's URL (browser history) nor in its storage; a reload keeps
// the same tabs, and after it Login alone makes CreatePost work. The page
// must work offline, with its favicon.
//
// Without Chromium the test is skipped, unless REQUIRE_BROWSER=1. Run
// `go test -run TestBrowserGraphiQL -artifacts ./cmd/gateway` to keep the
// screenshot.
func TestBrowserGraphiQL(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	// Cancelled after the browser's cleanup has closed it gracefully.
	t.Cleanup(cancel)
	if _, err := os.Stat(chromiumPath); err != nil && os.Getenv("REQUIRE_BROWSER") != "1" {
		t.Skipf("skipping: Chromium is not available (%v)", err)
	}
	baseURL, headers := startDemo(t, 12, nil)
	b := newBrowser(ctx, t, baseURL)
	token := bearer(t, headers["alice"])

	var tabs []string
	b.run(t, "open GraphiQL",
		chromedp.Navigate(baseURL+"/"),
		chromedp.WaitVisible(".graphiql-execute-button", chromedp.ByQuery),
		chromedp.WaitVisible(".graphiql-query-editor .CodeMirror", chromedp.ByQuery),
		poll(`document.querySelectorAll('.graphiql-tab').length >= 4`, 20*time.Second),
		chromedp.Evaluate(tabsJS, &tabs),
	)
	for _, want := range []string{"HomeTimeline", "CreatePost", "Live", "Notifications", "MarkRead", "Login", "RefreshToken"} {
		if !strings.Contains(strings.Join(tabs, "|"), want) {
			t.Errorf("tabs %q, want one named %s", tabs, want)
		}
	}
	var editor string
	b.eval(t, `document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue()`, &editor)
	if !strings.Contains(editor, "query HomeTimeline") {
		t.Fatalf("the active tab holds %q, want the home timeline example", editor)
	}

	// Paste the Headers line, as the README says, and run the tab.
	b.run(t, "paste the Headers line",
		chromedp.Evaluate(`(() => {
			const b = [...document.querySelectorAll('.graphiql-editor-tools button')].find(b => b.innerText.trim() === 'Headers');
			if (!b) throw new Error('no Headers button');
			b.click();
		})()`, nil),
		poll(`document.querySelector('.graphiql-editor-tool')?.getAttribute('aria-label') === 'Headers'`, 10*time.Second),
		// A paste, as a user makes it (GraphiQL's own setValue calls do
		// not count as the user's headers).
		chromedp.Evaluate(fmt.Sprintf(`(() => {
			const cm = %s;
			cm.execCommand('selectAll');
			cm.replaceSelection(%q, null, 'paste');
		})()`, headersEditorJS, headers["alice"]), nil),
	)
	result := runTab(t, b, `"endCursor"`, "")
	if strings.Contains(result, `"errors"`) || !strings.Contains(result, `"author"`) {
		t.Errorf("result pane = %.500q, want alice's timeline", result)
	}
	// The header pasted into the first tab goes with the other tabs.
	openTab(t, b, "CreatePost")
	var shown string
	b.eval(t, headersEditorJS+`.getValue()`, &shown)
	if shown != headers["alice"] {
		t.Errorf("the CreatePost tab's headers are %q, want the pasted %q", shown, headers["alice"])
	}
	if result := runTab(t, b, `"createPost"`, ""); strings.Contains(result, `"errors"`) {
		t.Errorf("CreatePost with the header pasted in another tab: %.500q", result)
	}
	// Running Login puts its access token into the headers.
	openTab(t, b, "Login")
	runLogin(t, b)
	b.eval(t, headersEditorJS+`.getValue()`, &shown)
	if !strings.Contains(shown, "Bearer ") || shown == headers["alice"] {
		t.Errorf("after Login the headers are %q, want its new access token", shown)
	}

	var tabsBefore, tabsAfter []string
	b.eval(t, tabsJS, &tabsBefore)
	var href, storage string
	b.eval(t, `location.href`, &href)
	// GraphiQL saves its tabs a moment after a change (debounced): wait
	// until they are saved, and a little more, before looking.
	b.run(t, "GraphiQL saved its tabs",
		poll(`Object.keys(localStorage).some(k => k.endsWith('tabState'))`, 10*time.Second),
		chromedp.Sleep(time.Second))
	b.eval(t, `JSON.stringify({...localStorage}) + JSON.stringify({...sessionStorage})`, &storage)
	if strings.Contains(href, token) || strings.Contains(href, "headers") {
		t.Errorf("the page's URL holds the headers: %s", href)
	}
	if strings.Contains(storage, token) || strings.Contains(storage, "Bearer ey") {
		t.Errorf("an access token is in the page's storage: %.2000s", storage)
	}

	// A reload finds the same tabs (no second Login tab); the headers
	// are gone with the page's memory, and Login alone makes CreatePost
	// work again in its own tab.
	b.run(t, "reload",
		chromedp.Reload(),
		chromedp.WaitVisible(".graphiql-execute-button", chromedp.ByQuery),
		poll(`document.querySelectorAll('.graphiql-tab').length >= 4`, 20*time.Second),
		chromedp.Evaluate(tabsJS, &tabsAfter),
	)
	if !slices.Equal(tabsBefore, tabsAfter) {
		t.Errorf("tabs after a reload %q, want %q", tabsAfter, tabsBefore)
	}
	openTab(t, b, "Login")
	runLogin(t, b)
	openTab(t, b, "CreatePost")
	if result := runTab(t, b, `"createPost"`, ""); strings.Contains(result, `"errors"`) {
		t.Errorf("CreatePost after logging in from the Login tab: %.500q", result)
	}
	b.screenshot(t, "graphiql.png")

	// An old link that carries headers is cleaned from the URL.
	b.run(t, "open a link with headers",
		chromedp.Navigate(baseURL+"/?query="+url.QueryEscape("{ me { name } }")+"&headers="+url.QueryEscape(headers["alice"])),
		chromedp.WaitVisible(".graphiql-execute-button", chromedp.ByQuery),
		chromedp.Evaluate(`location.href`, &href),
	)
	if strings.Contains(href, "headers") || strings.Contains(href, token) {
		t.Errorf("the headers of a link stay in the URL: %s", href)
	}
	b.eval(t, `document.querySelector('.graphiql-query-editor .CodeMirror').CodeMirror.getValue()`, &editor)
	if !strings.Contains(editor, "me { name }") {
		t.Errorf("a link's query: editor holds %q", editor)
	}
}

// JavaScript for GraphiQL's parts: the tabs' names, the headers editor.
const (
	tabsJS          = `[...document.querySelectorAll('.graphiql-tab')].map(t => t.innerText.trim())`
	headersEditorJS = `document.querySelector('.graphiql-editor-tool .graphiql-editor:not(.hidden) .CodeMirror').CodeMirror`
	responseJS      = `document.querySelector('.graphiql-response .CodeMirror').CodeMirror`
)

// openTab makes the GraphiQL tab named name the active one.
func openTab(t *testing.T, b *browser, name string) {
	t.Helper()
	b.run(t, "open the tab "+name,
		chromedp.Evaluate(fmt.Sprintf(`(() => {
			const tab = [...document.querySelectorAll('.graphiql-tab')].find(t => t.innerText.trim() === %q);
			if (!tab) throw new Error('no tab %s');
			tab.querySelector('button').click();
		})()`, name, name), nil),
		poll(fmt.Sprintf(`document.querySelector('.graphiql-tab-active')?.innerText.trim() === %q`, name), 10*time.Second),
		// GraphiQL finds the tab's operation name a moment after the
		// switch (a debounced parse); before it, the run button would
		// still send the previous tab's name.
		chromedp.Sleep(700*time.Millisecond),
	)
}

// runTab runs the active tab and returns the result once it holds want.
// A tab with several operations runs the one named op, picked from the
// menu the run button opens. The response editor renders only the lines
// in view: its text is read from CodeMirror.
func runTab(t *testing.T, b *browser, want, op string) string {
	t.Helper()
	actions := []chromedp.Action{
		chromedp.Evaluate(responseJS+`.setValue('')`, nil),
		chromedp.Click(".graphiql-execute-button", chromedp.ByQuery),
	}
	if op != "" {
		pick := fmt.Sprintf(`[...document.querySelectorAll('[role=menuitem]')].find(m => m.innerText.trim() === %q)`, op)
		actions = append(actions, poll(pick+` !== undefined`, 10*time.Second), chromedp.Evaluate(pick+`.click()`, nil))
	}
	var result string
	actions = append(actions,
		poll(fmt.Sprintf(`(() => {
			const v = %s.getValue();
			return v.includes(%q) || v.includes('"errors"');
		})()`, responseJS, want), 30*time.Second),
		chromedp.Evaluate(responseJS+`.getValue()`, &result))
	b.run(t, "run the tab", actions...)
	return result
}

// runLogin runs the Login tab, whose one operation runs without a
// chooser.
func runLogin(t *testing.T, b *browser) {
	t.Helper()
	if result := runTab(t, b, `"accessToken"`, ""); strings.Contains(result, `"errors"`) {
		t.Fatalf("Login: %.500q", result)
	}
}

// checkRefresh checks that the app refreshed its 65-second access token
// when it had a minute left, before it asked for another page: the token
// was issued after the login request, so from 5 s after it (a second more
// for slack) no page may go out before the first refresh, and one must.
func checkRefresh(t *testing.T, sent []request) {
	t.Helper()
	var login time.Time
	for _, r := range sent {
		if strings.Contains(r.body, "mutation Login") {
			login = r.at
		}
	}
	if login.IsZero() {
		t.Fatal("no login request seen")
	}
	due := login.Add(6 * time.Second)
	var refresh time.Time
	for _, r := range sent {
		if strings.Contains(r.body, "refreshToken(refreshToken:") {
			refresh = r.at
			break
		}
	}
	if refresh.IsZero() {
		t.Fatal("the app did not refresh its access token before it expired")
	}
	if refresh.Before(login.Add(5 * time.Second)) {
		t.Errorf("the app refreshed %v after logging in, before the token had a minute left", refresh.Sub(login))
	}
	pageAfter := false
	for _, r := range sent {
		if !strings.Contains(r.body, "query Home") {
			continue
		}
		if r.at.After(due) && r.at.Before(refresh) {
			t.Errorf("the app asked for a page %v after logging in, with a token about to expire", r.at.Sub(login))
		}
		pageAfter = pageAfter || r.at.After(refresh)
	}
	if !pageAfter {
		t.Error("no page was asked for after the refresh: the test proves nothing")
	}
}

// spaDist builds examples/spa with npm and returns its dist directory.
// Without node and npm the test is skipped, unless REQUIRE_NODE=1.
func spaDist(t *testing.T) string {
	t.Helper()
	redistest.Slow(t, "builds the reference app with npm")
	src, err := filepath.Abs("../../examples/spa")
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"node", "npm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("REQUIRE_NODE") == "1" {
				t.Fatalf("REQUIRE_NODE=1, but %s is not available: %v", tool, err)
			}
			t.Skipf("skipping: %s is not available; set REQUIRE_NODE=1 to make this a failure", tool)
		}
	}
	// A copy, so that the test never writes into the tree: a newcomer's own
	// npm ci or build in examples/spa runs beside it without a collision.
	dir := t.TempDir()
	copySPA(t, src, dir)
	npm := func(args ...string) {
		cmd := exec.Command("npm", args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out)
		}
	}
	npm("ci", "--no-audit", "--no-fund")
	dist := filepath.Join(dir, "dist")
	npm("run", "build", "--", "--outdir="+dist)
	return dist
}

// copySPA copies the app's sources, not what npm or a build made there.
func copySPA(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			if rel == "node_modules" || rel == "dist" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy %s: %v", src, err)
	}
}

// TestBrowserSPA drives the reference app (examples/spa) in headless
// Chromium against a demo gateway serving it at /app/: alice logs in,
// scrolls her home timeline (the next page loads), likes and comments on a
// post, her access token is refreshed when it nears its end, a post bob
// publishes arrives live, and posts made while the socket is down arrive
// once, in order; bob's like of her post raises her bell's count live,
// and she marks it read; she posts an image and a sound, which render
// with their dimensions and play with ranges.
func TestBrowserSPA(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 180*time.Second)
	// Cancelled after the browser's cleanup has closed it gracefully.
	t.Cleanup(cancel)
	if _, err := os.Stat(chromiumPath); err != nil && os.Getenv("REQUIRE_BROWSER") != "1" {
		t.Skipf("skipping: Chromium is not available (%v)", err)
	}
	dist := spaDist(t)
	// Access tokens of 65 s: the app refreshes a minute before the end,
	// so 5 s after logging in.
	baseURL, headers := startDemo(t, 13, map[string]string{"SPA_DIR": dist, "ACCESS_TOKEN_TTL": "65s"})
	b := newBrowser(ctx, t, baseURL)

	const posts = `document.querySelectorAll('#posts article.post').length`
	b.run(t, "log in",
		logIn(baseURL, "alice"),
		poll(posts+` >= 10`, 20*time.Second),
	)
	loggedIn := time.Now() // a little after the token was issued
	var who string
	b.eval(t, `document.getElementById('who').innerText`, &who)
	if who != "@alice" {
		t.Errorf("header shows %q, want @alice", who)
	}
	// Wait until the token is due for a refresh and the app is idle,
	// then scroll: the next page needs a fresh token first.
	time.Sleep(time.Until(loggedIn.Add(6 * time.Second)))
	var first int
	b.run(t, "settle", poll(`document.body.dataset.loading === 'false'`, 10*time.Second), chromedp.Evaluate(posts, &first))
	b.run(t, "scroll to the end",
		chromedp.Evaluate(`window.scrollTo(0, document.body.scrollHeight)`, nil),
		poll(fmt.Sprintf(`%s > %d`, posts, first), 20*time.Second),
	)
	checkRefresh(t, b.sent())
	// Like and comment on the first post.
	const comment = "Nice one, from the browser test"
	b.run(t, "like and comment",
		chromedp.Evaluate(`window.scrollTo(0, 0)`, nil),
		chromedp.Evaluate(`(() => {
			const a = document.querySelector('#posts article.post');
			window.likedBefore = a.querySelector('button.like').dataset.liked;
			a.querySelector('button.like').click();
		})()`, nil),
		poll(`document.querySelector('#posts article.post button.like').dataset.liked !== window.likedBefore`, 10*time.Second),
		chromedp.SendKeys(`#posts article.post form input[name=content]`, comment, chromedp.ByQuery),
		chromedp.Click(`#posts article.post form button[type=submit]`, chromedp.ByQuery),
		poll(fmt.Sprintf(`document.querySelector('#posts article.post .comments').innerText.includes(%q)`, comment), 10*time.Second),
	)
	var errText string
	b.eval(t, `document.getElementById('home-error').innerText`, &errText)
	if errText != "" {
		t.Errorf("the app shows an error: %q", errText)
	}

	t.Run("a post from bob arrives live", func(t *testing.T) {
		var state, status string
		b.run(t, "wait for the subscription",
			poll(`['live', 'unavailable'].includes(document.getElementById('live-status').dataset.state)`, 20*time.Second),
			chromedp.Evaluate(`document.getElementById('live-status').dataset.state`, &state),
			chromedp.Evaluate(`document.getElementById('live-status').innerText`, &status),
		)
		if state == "unavailable" {
			// Only the gateway's own answer that the subscription does
			// not exist yet excuses this step.
			if strings.Contains(status, "timelineUpdated is not available") {
				t.Skipf("the gateway does not offer live timelines yet: %s", status)
			}
			t.Fatalf("live updates failed: %s", status)
		}
		content := fmt.Sprintf("Live from bob at %s", time.Now().Format(time.StampMilli))
		r := postAs(t, baseURL, bearer(t, headers["bob"]), content)
		if r.Code() != "" {
			t.Fatalf("bob's post: %+v", r)
		}
		b.run(t, "see bob's post arrive",
			poll(fmt.Sprintf(`(() => {
				const a = document.querySelector('#posts article.post');
				return a !== null && a.dataset.author === 'bob' && a.innerText.includes(%q) && a.classList.contains('new');
			})()`, content), 20*time.Second),
		)
	})
	t.Run("a hashtag opens its tag page", func(t *testing.T) {
		content := fmt.Sprintf("Tagged by bob #BrowserTag at %s", time.Now().Format(time.StampMilli))
		if r := postAs(t, baseURL, bearer(t, headers["bob"]), content); r.Code() != "" {
			t.Fatalf("bob's post: %+v", r)
		}
		b.run(t, "click the tag of bob's post",
			poll(fmt.Sprintf(`[...document.querySelectorAll('#posts article.post')].some(a => a.innerText.includes(%q) && a.querySelector('a.tag'))`, content), 20*time.Second),
			chromedp.Evaluate(fmt.Sprintf(`[...document.querySelectorAll('#posts article.post')].find(a => a.innerText.includes(%q)).querySelector('a.tag').click()`, content), nil),
			poll(fmt.Sprintf(`!document.getElementById('tag-view').hidden && document.getElementById('tag-title').innerText === '#browsertag' &&
				[...document.querySelectorAll('#tag-posts article.post')].some(a => a.innerText.includes(%q))`, content), 20*time.Second),
			chromedp.Click(`#tag-back`, chromedp.ByQuery),
			poll(`document.getElementById('tag-view').hidden && !document.getElementById('posts').hidden`, 10*time.Second),
		)
	})
	t.Run("posts made while the socket is down arrive once, in order", func(t *testing.T) {
		// The socket dies (as a network drop or a gateway restart kills
		// it); two posts are made before the app is back; it resumes with
		// since and shows both, in order, then live ones again.
		b.run(t, "drop the socket", chromedp.Evaluate(`socialgw.ws.terminate()`, nil))
		var contents []string
		for i := range 2 {
			c := fmt.Sprintf("While away %d at %s", i, time.Now().Format(time.StampMilli))
			if r := postAs(t, baseURL, bearer(t, headers["bob"]), c); r.Code() != "" {
				t.Fatalf("bob's post: %+v", r)
			}
			contents = append(contents, c)
		}
		after := fmt.Sprintf("Back live at %s", time.Now().Format(time.StampMilli))
		b.run(t, "see them arrive",
			poll(fmt.Sprintf(`[...document.querySelectorAll('#posts article.post')].some(a => a.innerText.includes(%q))`, contents[1]), 30*time.Second),
			poll(`document.getElementById('live-status').dataset.state === 'live'`, 20*time.Second),
		)
		if r := postAs(t, baseURL, bearer(t, headers["bob"]), after); r.Code() != "" {
			t.Fatalf("bob's post: %+v", r)
		}
		var order []string
		b.run(t, "and a live one after",
			poll(fmt.Sprintf(`document.querySelector('#posts article.post').innerText.includes(%q)`, after), 20*time.Second),
			chromedp.Evaluate(`[...document.querySelectorAll('#posts article.post .content')].slice(0, 3).map(c => c.innerText)`, &order),
		)
		if want := []string{after, contents[1], contents[0]}; !slices.Equal(order, want) {
			t.Fatalf("top of the timeline %q, want %q", order, want)
		}
		var copies int
		b.eval(t, fmt.Sprintf(`[...document.querySelectorAll('#posts article.post')].filter(a => a.innerText.includes(%q)).length`, contents[0]), &copies)
		if copies != 1 {
			t.Fatalf("%d copies of a post made while away", copies)
		}
	})
	t.Run("bob's like rings alice's bell live", func(t *testing.T) {
		var before int
		b.run(t, "the bell is live",
			poll(`document.getElementById('bell').dataset.live === 'live'`, 20*time.Second),
			chromedp.Evaluate(`Number(document.getElementById('bell').dataset.unread)`, &before))
		r := postAs(t, baseURL, bearer(t, headers["alice"]), fmt.Sprintf("Like this, bob (%s)", time.Now().Format(time.StampMilli)))
		id := r.Str("createPost.id")
		if r := gatewaytest.Post(t, baseURL, bearer(t, headers["bob"]), `mutation($id: ID!) { likePost(postId: $id) { id } }`,
			map[string]any{"id": id}); r.Code() != "" {
			t.Fatalf("bob's like: %+v", r)
		}
		b.run(t, "see the count go up and the notification listed",
			poll(fmt.Sprintf(`Number(document.getElementById('bell').dataset.unread) > %d`, before), 20*time.Second),
			chromedp.Click(`#bell`, chromedp.ByQuery),
			poll(`(() => {
				const li = document.querySelector('#notification-list li');
				return li !== null && li.dataset.kind === 'LIKE' && li.innerText.includes('@bob') && li.classList.contains('unread');
			})()`, 10*time.Second),
			chromedp.Click(`#mark-read`, chromedp.ByQuery),
			poll(`document.getElementById('bell').dataset.unread === '0' && !document.querySelector('#notification-list li.unread')`, 10*time.Second),
		)
	})
	t.Run("alice posts an image and a sound", func(t *testing.T) {
		dir := t.TempDir()
		png, mp3 := filepath.Join(dir, "dot.png"), filepath.Join(dir, "sound.mp3")
		writeTestPNG(t, png, 64, 48)
		copyFile(t, mp3, "../../internal/media/testdata/cbr.mp3")
		content := fmt.Sprintf("A picture at %s", time.Now().Format(time.StampMilli))
		b.run(t, "post with an image and a sound",
			chromedp.Evaluate(`window.scrollTo(0, 0)`, nil),
			chromedp.SendKeys(`#compose textarea[name=content]`, content, chromedp.ByQuery),
			chromedp.SetUploadFiles(`#compose input[name=files]`, []string{png, mp3}, chromedp.ByQuery),
			chromedp.SendKeys(`#compose input[name=alt]`, "a test pattern", chromedp.ByQuery),
			chromedp.Click(`#compose button[type=submit]`, chromedp.ByQuery),
			poll(fmt.Sprintf(`(() => {
				const a = document.querySelector('#posts article.post');
				if (!a || !a.innerText.includes(%q)) return false;
				const img = a.querySelector('.media img');
				return img !== null && img.complete && img.naturalWidth === 64 && img.getAttribute('width') === '64' &&
					img.getAttribute('height') === '48' && img.alt === 'a test pattern' && a.querySelector('.media audio') !== null;
			})()`, content), 30*time.Second),
		)
		// The browser plays what the gateway serves (an MP3 file of real
		// frames: the Opus test file has headers only).
		var duration float64
		b.run(t, "the audio loads",
			poll(`document.querySelector('#posts article.post .media audio').readyState >= 1`, 20*time.Second),
			chromedp.Evaluate(`document.querySelector('#posts article.post .media audio').duration`, &duration))
		if duration <= 0 {
			t.Errorf("audio duration %v in the browser", duration)
		}
		// The audio is served with ranges, as players ask for it.
		var status int
		b.run(t, "fetch a range of the audio", chromedp.Evaluate(`(async () => {
			const a = document.querySelector('#posts article.post .media audio');
			const r = await fetch(a.src, {headers: {Range: 'bytes=0-15'}});
			return r.status;
		})()`, &status, func(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }))
		if status != 206 {
			t.Errorf("a range of the audio: status %d, want 206", status)
		}
		var errText string
		b.eval(t, `document.getElementById('home-error').innerText`, &errText)
		if errText != "" {
			t.Errorf("the app shows an error: %q", errText)
		}
	})
	t.Run("alice bookmarks and pins", func(t *testing.T) {
		b.run(t, "bookmark and pin her newest post, then see it among her bookmarks",
			chromedp.Evaluate(`window.scrollTo(0, 0)`, nil),
			chromedp.Evaluate(`(() => {
				const a = document.querySelector('#posts article.post[data-author="alice"]');
				window.curatedID = a.dataset.id;
				a.querySelector('button.bookmark').click();
				a.querySelector('button.pin').click();
			})()`, nil),
			poll(`(() => {
				const a = document.querySelector('#posts article.post[data-id="' + window.curatedID + '"]');
				return a.querySelector('button.bookmark').dataset.bookmarked === 'true' && a.querySelector('button.pin').dataset.pinned === 'true';
			})()`, 10*time.Second),
			chromedp.Click(`#views button[data-view=bookmarks]`, chromedp.ByQuery),
			poll(`[...document.querySelectorAll('#curation article.post')].some(a => a.dataset.id === window.curatedID)`, 10*time.Second),
		)
		b.run(t, "back home",
			chromedp.Click(`#views button[data-view=home]`, chromedp.ByQuery),
			poll(`!document.getElementById('posts').hidden && document.getElementById('curation').hidden`, 10*time.Second),
		)
		var errText string
		b.eval(t, `document.getElementById('home-error').innerText`, &errText)
		if errText != "" {
			t.Errorf("the app shows an error: %q", errText)
		}
	})
	b.screenshot(t, "spa.png")
}

// writeTestPNG writes a w×h PNG to file.
func writeTestPNG(t *testing.T, file string, w, h int) {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for x := range w {
		for y := range h {
			img.Set(x, y, color.RGBA{uint8(x * 4), uint8(y * 5), 200, 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// copyFile copies the file from to the file to.
func copyFile(t *testing.T, to, from string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}
