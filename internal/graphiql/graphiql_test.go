package graphiql_test

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"hash"
	"html"
	"net/http"
	"net/http/httptest"
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
		{"get", http.MethodGet, "/", http.StatusOK, []string{"<title>Test Gateway</title>", `location.host + "/query"`, "GraphiQL.createFetcher"}},
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
			if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
				t.Errorf("Content-Security-Policy = %q, want a restrictive policy", csp)
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
	attrRE = regexp.MustCompile(`(?s)\b(src|href|integrity)="([^"]*)"`)
)

type resource struct{ tag, url, integrity string }

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
			}
		}
		if r.tag == "script" && r.url == "" {
			continue // inline bootstrap script
		}
		res = append(res, r)
	}
	return res
}

func TestPageResourcesAreLocalAndIntact(t *testing.T) {
	h := newHandler()
	res := resources(t, getPage(t, h))
	var scripts, styles int
	for _, r := range res {
		switch r.tag {
		case "script":
			scripts++
		case "link":
			styles++
		}
	}
	// React, ReactDOM, GraphiQL; GraphiQL's stylesheet.
	if scripts != 3 || styles != 1 {
		t.Fatalf("page loads %d scripts and %d stylesheets, want 3 and 1: %+v", scripts, styles, res)
	}
	for _, r := range res {
		t.Run(r.url, func(t *testing.T) {
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
		"/favicon.ico",
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
