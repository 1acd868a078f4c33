package main

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/socialgw/gateway/internal/redistest"
)

// chromiumPath is where the Debian package chromium installs the browser.
const chromiumPath = "/usr/bin/chromium"

// TestBrowserGraphiQL starts the gateway, opens its GraphiQL page in headless
// Chromium, runs `{ __typename }` and waits for the answer in the result pane.
// The page must work offline: the test fails if the browser requests anything
// from another origin than the gateway, or violates the page's
// Content-Security-Policy.
//
// Without Chromium the test is skipped, unless REQUIRE_BROWSER=1.
// Run `go test -run TestBrowserGraphiQL -artifacts ./cmd/gateway` to keep the
// screenshot.
func TestBrowserGraphiQL(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("REQUIRE_BROWSER") == "1" {
			t.Fatalf("REQUIRE_BROWSER=1, but Chromium is not available: %v", err)
		}
		t.Skipf("skipping: Chromium is not available (%v); install the Debian package chromium, "+
			"or set REQUIRE_BROWSER=1 to make this a failure", err)
	}

	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Second)
	defer cancel()

	baseURL := startGateway(ctx, t)
	base, err := url.Parse(baseURL)
	if err != nil {
		t.Fatalf("base URL %q: %v", baseURL, err)
	}

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
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1280, 800),
	)...)
	defer cancelAlloc()
	browserCtx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithLogf(t.Logf))
	defer cancelBrowser()
	defer func() {
		// Close the browser gracefully, so that it has stopped writing
		// to its profile before t.TempDir is removed.
		if err := chromedp.Cancel(browserCtx); err != nil {
			t.Logf("closing Chromium: %v", err)
		}
	}()

	// Watch what the page requests and logs. Requests to other origins,
	// Content-Security-Policy violations and uncaught exceptions fail the
	// test; other errors the page logs are only reported.
	var (
		mu       sync.Mutex
		failures []string
		notes    []string
	)
	chromedp.ListenTarget(browserCtx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *network.EventRequestWillBeSent:
			u, err := url.Parse(ev.Request.URL)
			if err == nil && (u.Scheme == "data" || u.Scheme == "blob" || u.Scheme == "about") {
				return
			}
			if err != nil || u.Host != base.Host {
				failures = append(failures, "request outside the gateway: "+ev.Request.URL)
			}
		case *runtime.EventExceptionThrown:
			failures = append(failures, "uncaught exception: "+ev.ExceptionDetails.Error())
		case *log.EventEntryAdded:
			msg := fmt.Sprintf("%s %s: %s %s", ev.Entry.Level, ev.Entry.Source, ev.Entry.Text, ev.Entry.URL)
			switch {
			case ev.Entry.Source == log.SourceSecurity:
				failures = append(failures, msg)
			case ev.Entry.Level == log.LevelError && !strings.HasSuffix(ev.Entry.URL, "/favicon.ico"):
				notes = append(notes, msg)
			}
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.APITypeError {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				notes = append(notes, "console.error: "+strings.Join(args, " "))
			}
		}
	})
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, n := range notes {
			t.Logf("browser: %s", n)
		}
		for _, f := range failures {
			t.Errorf("browser: %s", f)
		}
	}()

	// GraphiQL reads the initial query from the URL (?query=...).
	const query = "{ __typename }"
	pageURL := baseURL + "/?query=" + url.QueryEscape(query)
	const want = `"__typename": "Query"`
	var editor, result string
	var screenshot []byte
	err = chromedp.Run(browserCtx,
		chromedp.Navigate(pageURL),
		chromedp.WaitVisible(".graphiql-execute-button", chromedp.ByQuery),
		chromedp.WaitVisible(".graphiql-query-editor .CodeMirror", chromedp.ByQuery),
		chromedp.Text(".graphiql-query-editor .CodeMirror-code", &editor, chromedp.ByQuery),
	)
	if err != nil {
		t.Fatalf("open %s: %v", pageURL, err)
	}
	if !strings.Contains(editor, "__typename") {
		t.Fatalf("query editor contains %q, want %q", editor, query)
	}
	err = chromedp.Run(browserCtx,
		chromedp.Click(".graphiql-execute-button", chromedp.ByQuery),
		chromedp.Poll(`(() => {
			const r = document.querySelector('.graphiql-response');
			return r !== null && r.innerText.includes(`+"`"+want+"`"+`);
		})()`, nil, chromedp.WithPollingTimeout(30*time.Second)),
		chromedp.Text(".graphiql-response", &result, chromedp.ByQuery),
		chromedp.CaptureScreenshot(&screenshot),
	)
	if err != nil {
		var text string
		_ = chromedp.Run(browserCtx, chromedp.Evaluate(
			`document.querySelector('.graphiql-response')?.innerText ?? '(no result pane)'`, &text))
		t.Fatalf("running the query: %v; result pane: %q", err, text)
	}
	if !strings.Contains(result, want) {
		t.Errorf("result pane = %q, want it to contain %q", result, want)
	}
	file := filepath.Join(t.ArtifactDir(), "graphiql.png")
	if err := os.WriteFile(file, screenshot, 0o644); err != nil {
		t.Errorf("write screenshot: %v", err)
	} else {
		t.Logf("screenshot: %s", file)
	}
}

// startGateway runs the gateway with a throwaway Redis until the test ends and
// returns its base URL.
func startGateway(ctx context.Context, t *testing.T) string {
	t.Helper()
	env := map[string]string{
		"REDIS_URL":  redistest.URL(t),
		"JWT_SECRET": "browser-test-secret-0123456789abcdefghij",
	}
	runCtx, stop := context.WithCancel(ctx)
	ready := make(chan string, 1)
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		runErr = run(runCtx, []string{"--listen=127.0.0.1:0"},
			func(k string) string { return env[k] },
			t.Output(),
			func(baseURL string) {
				select {
				case ready <- baseURL:
				default:
				}
			})
	}()
	t.Cleanup(func() {
		stop()
		<-done
		if runErr != nil && !errors.Is(runErr, context.Canceled) {
			t.Errorf("run: %v", runErr)
		}
	})
	select {
	case baseURL := <-ready:
		return baseURL
	case <-done:
		t.Fatalf("run returned before it was ready: %v", runErr)
	case <-ctx.Done():
		t.Fatalf("gateway not ready: %v", ctx.Err())
	}
	return ""
}
