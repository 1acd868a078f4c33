package graphiql_test

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"hash"
	"html"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/socialgw/gateway/internal/graphiql"
)

func newHandler() http.Handler { return graphiql.Handler("Test Gateway", "/query") }

func do(t *testing.T, h http.Handler, method, target string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	req := httptest.NewRequest(method, target, nil)
	for k, v := range header {
		req.Header[k] = v
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func getPage(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := do(t, h, http.MethodGet, "/", nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET / = %d, want 200", rec.Code)
	}
	return rec.Body.String()
}

func TestPage(t *testing.T) {
	h := newHandler()
	tests := []struct {
		name, method, target string
		wantCode             int
		wantBody             []string
	}{
		{"get", http.MethodGet, "/", http.StatusOK, []string{"<title>Test Gateway</title>", `"endpoint":"/query"`, `rel="icon"`}},
		{"get with query", http.MethodGet, "/?query=%7B+__typename+%7D", http.StatusOK, []string{"<title>Test Gateway</title>"}},
		{"head", http.MethodHead, "/", http.StatusOK, nil},
		{"post", http.MethodPost, "/", http.StatusMethodNotAllowed, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := do(t, h, tt.method, tt.target, nil)
			if rec.Code != tt.wantCode {
				t.Fatalf("%s %s = %d, want %d", tt.method, tt.target, rec.Code, tt.wantCode)
			}
			if tt.wantCode != http.StatusOK {
				return
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
				t.Errorf("Content-Type = %q, want text/html", ct)
			}
			if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") ||
				!strings.Contains(csp, "script-src 'self';") {
				t.Errorf("Content-Security-Policy = %q, want a restrictive policy without inline scripts", csp)
			}
			for _, want := range tt.wantBody {
				if !strings.Contains(rec.Body.String(), want) {
					t.Errorf("body does not contain %q", want)
				}
			}
		})
	}
}

var (
	tagRE  = regexp.MustCompile(`(?s)<(script|link)\b[^>]*>`)
	attrRE = regexp.MustCompile(`(?s)\b(src|href|integrity|rel|type)="([^"]*)"`)
)

// resource is a script, stylesheet or icon the page loads.
type resource struct{ tag, rel, url, integrity string }

// resources returns every script and stylesheet the page loads.
func resources(t *testing.T, page string) []resource {
	t.Helper()
	var res []resource
	for _, m := range tagRE.FindAllStringSubmatch(page, -1) {
		r := resource{tag: m[1]}
		for _, a := range attrRE.FindAllStringSubmatch(m[0], -1) {
			v := html.UnescapeString(a[2])
			switch a[1] {
			case "src", "href":
				r.url = v
			case "integrity":
				r.integrity = v
			case "rel":
				r.rel = v
			case "type":
				if r.tag == "script" && v == "application/json" {
					r.tag = "data"
				}
			}
		}
		if r.tag == "script" && r.url == "" {
			t.Errorf("page has an inline script: %s", m[0])
		}
		if r.tag == "data" {
			continue // the JSON settings block
		}
		res = append(res, r)
	}
	return res
}

func TestPageResourcesAreLocalAndIntact(t *testing.T) {
	h := newHandler()
	res := resources(t, getPage(t, h))
	var scripts, styles, icons int
	for _, r := range res {
		switch {
		case r.tag == "script":
			scripts++
		case r.rel == "stylesheet":
			styles++
		case r.rel == "icon":
			icons++
		}
	}
	// React, ReactDOM, GraphiQL, init.js; GraphiQL's stylesheet; the
	// favicon as SVG and ICO.
	if scripts != 4 || styles != 1 || icons != 2 {
		t.Fatalf("page loads %d scripts, %d stylesheets and %d icons, want 4, 1 and 2: %+v", scripts, styles, icons, res)
	}
	for _, r := range res {
		t.Run(r.url, func(t *testing.T) {
			if r.rel == "icon" {
				checkIcon(t, h, r.url)
				return
			}
			if !strings.HasPrefix(r.url, graphiql.AssetPath) {
				t.Fatalf("%s URL %q is not below %q", r.tag, r.url, graphiql.AssetPath)
			}
			rec := do(t, h, http.MethodGet, r.url, nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET %s = %d, want 200", r.url, rec.Code)
			}
			wantCT := "text/javascript"
			if r.tag == "link" {
				wantCT = "text/css"
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, wantCT) {
				t.Errorf("Content-Type = %q, want %s", ct, wantCT)
			}
			if cc := rec.Header().Get("Cache-Control"); !strings.Contains(cc, "max-age=31536000") {
				t.Errorf("Cache-Control = %q, want a long max-age", cc)
			}
			checkIntegrity(t, r.integrity, rec.Body.Bytes())

			etag := rec.Header().Get("ETag")
			if etag == "" {
				t.Fatal("no ETag")
			}
			rec = do(t, h, http.MethodGet, r.url, http.Header{"If-None-Match": {etag}})
			if rec.Code != http.StatusNotModified {
				t.Errorf("conditional GET = %d, want 304", rec.Code)
			}
		})
	}
}

func checkIntegrity(t *testing.T, integrity string, body []byte) {
	t.Helper()
	alg, want, ok := strings.Cut(integrity, "-")
	if !ok {
		t.Fatalf("integrity attribute %q is malformed", integrity)
	}
	var hh hash.Hash
	switch alg {
	case "sha256":
		hh = sha256.New()
	case "sha384":
		hh = sha512.New384()
	case "sha512":
		hh = sha512.New()
	default:
		t.Fatalf("integrity attribute %q: unknown algorithm", integrity)
	}
	hh.Write(body)
	if got := base64.StdEncoding.EncodeToString(hh.Sum(nil)); got != want {
		t.Errorf("integrity %q does not match body (%s-%s)", integrity, alg, got)
	}
}

// TestEmbeddedAssetsMatchUpstream pins the embedded files to the files
// published on npm (see fetch-assets.sh).
func TestEmbeddedAssetsMatchUpstream(t *testing.T) {
	h := newHandler()
	tests := []struct{ path, sha256 string }{
		{"graphiql-4.1.2.min.js", "867226ba8af5ce7949903fc53932f78dac9f4bfc6cc8da0fd3869b8bc6c5256b"},
		{"graphiql-4.1.2.min.css", "30487e07635d312a63f647b140d37740a73c53332b0975bf4b1fe985ca6ec885"},
		{"react-18.2.0.production.min.js", "4b4969fa4ef3594324da2c6d78ce8766fbbc2fd121fff395aedf997db0a99a06"},
		{"react-dom-18.2.0.production.min.js", "21758ed084cd0e37e735722ee4f3957ea960628a29dfa6c3ce1a1d47a2d6e4f7"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			rec := do(t, h, http.MethodGet, graphiql.AssetPath+tt.path, nil)
			if rec.Code != http.StatusOK {
				t.Fatalf("GET = %d, want 200", rec.Code)
			}
			sum := sha256.Sum256(rec.Body.Bytes())
			if got := hex.EncodeToString(sum[:]); got != tt.sha256 {
				t.Errorf("sha256 = %s, want %s", got, tt.sha256)
			}
		})
	}
}

func TestPageHasNoExternalURLs(t *testing.T) {
	page := getPage(t, newHandler())
	if m := regexp.MustCompile(`(?i)\b(https?|wss?):(//|\\/\\/)`).FindAllString(page, -1); len(m) > 0 {
		t.Errorf("page contains absolute URLs %q", m)
	}
	if strings.Contains(page, "//cdn") || strings.Contains(page, "jsdelivr") || strings.Contains(page, "unpkg") {
		t.Error("page references a CDN")
	}
}

func TestUnknownPathsNotFound(t *testing.T) {
	h := newHandler()
	for _, target := range []string{
		"/index.html",
		"/query",
		"/favicon.svg",
		graphiql.AssetPath + "init.js",
		graphiql.AssetPath + "favicon.svg",
		"/graphiql",
		graphiql.AssetPath,
		graphiql.AssetPath + "nope.js",
		graphiql.AssetPath + "graphiql-4.1.2.min.js.map",
		graphiql.AssetPath + "LICENSE.react",
		graphiql.AssetPath + "assets/react-18.2.0.production.min.js",
		graphiql.AssetPath + "x/react-18.2.0.production.min.js",
	} {
		t.Run(target, func(t *testing.T) {
			if rec := do(t, h, http.MethodGet, target, nil); rec.Code != http.StatusNotFound {
				t.Errorf("GET %s = %d, want 404", target, rec.Code)
			}
		})
	}
}

// checkIcon fetches an icon the page links and checks that it is an image
// of the declared kind.
func checkIcon(t *testing.T, h http.Handler, url string) {
	t.Helper()
	rec := do(t, h, http.MethodGet, url, nil)
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s = %d, want 200", url, rec.Code)
	}
	body := rec.Body.Bytes()
	switch ct := rec.Header().Get("Content-Type"); {
	case strings.HasSuffix(url, ".ico"):
		// ICONDIR: reserved 0, type 1 (icon), at least one image.
		if ct != "image/x-icon" || len(body) < 22 || body[0] != 0 || body[1] != 0 || body[2] != 1 || body[4] == 0 {
			t.Errorf("GET %s: Content-Type %q, %d bytes: not an icon", url, ct, len(body))
		}
	case strings.HasSuffix(url, ".svg"):
		if ct != "image/svg+xml" || !strings.HasPrefix(string(body), "<svg") {
			t.Errorf("GET %s: Content-Type %q: not an SVG image", url, ct)
		}
	default:
		t.Errorf("icon %s: unexpected kind", url)
	}
	if rec.Header().Get("ETag") == "" || rec.Header().Get("Cache-Control") == "" {
		t.Errorf("GET %s: no ETag or Cache-Control", url)
	}
}

func TestFavicon(t *testing.T) {
	checkIcon(t, newHandler(), "/favicon.ico")
}

var configRE = regexp.MustCompile(`(?s)<script type="application/json" id="graphiql-config">(.*?)</script>`)

// TestPageConfig checks the settings init.js reads: the endpoint and the
// example tabs, which the page must carry intact (HTML escaping must not
// break the JSON).
func TestPageConfig(t *testing.T) {
	m := configRE.FindStringSubmatch(getPage(t, newHandler()))
	if m == nil {
		t.Fatal("page has no graphiql-config block")
	}
	var cfg struct {
		Endpoint string         `json:"endpoint"`
		Tabs     []graphiql.Tab `json:"tabs"`
	}
	if err := json.Unmarshal([]byte(m[1]), &cfg); err != nil {
		t.Fatalf("graphiql-config: %v\n%s", err, m[1])
	}
	if cfg.Endpoint != "/query" {
		t.Errorf("endpoint = %q, want /query", cfg.Endpoint)
	}
	if want := graphiql.Examples(); !reflect.DeepEqual(cfg.Tabs, want) {
		t.Errorf("tabs = %+v\nwant Examples() = %+v", cfg.Tabs, want)
	}
	for _, tab := range cfg.Tabs {
		if tab.Headers != "" {
			t.Errorf("tab %.40q comes with headers %q; the page must carry no credentials", tab.Query, tab.Headers)
		}
	}
}
