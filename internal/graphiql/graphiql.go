// Package graphiql serves the GraphiQL IDE from assets embedded in the binary.
//
// Every script and stylesheet the page references is served by this package
// from files embedded with go:embed (GraphiQL and React from npm, see
// assets/ and fetch-assets.sh; the start-up script and favicon in static/),
// so the IDE works without internet access and the page needs no inline
// script. Subresource-integrity hashes are computed from the embedded bytes
// at start-up.
package graphiql

//go:generate ./fetch-assets.sh
//go:generate go run favicon_gen.go static/favicon.ico

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"
)

// AssetPath is the URL prefix below which the embedded assets are served.
const AssetPath = "/graphiql/"

// Versions of the embedded packages (npm). Keep in sync with fetch-assets.sh.
const (
	graphiqlVersion = "4.1.2"
	reactVersion    = "18.2.0"
)

// File names of the embedded assets, below assets/ and AssetPath.
const (
	graphiqlJS  = "graphiql-" + graphiqlVersion + ".min.js"
	graphiqlCSS = "graphiql-" + graphiqlVersion + ".min.css"
	reactJS     = "react-" + reactVersion + ".production.min.js"
	reactDOMJS  = "react-dom-" + reactVersion + ".production.min.js"
)

//go:embed assets/*.js assets/*.css
var assetFS embed.FS

// The project's own files: the page's start-up script and the favicon.
// They are served under names that carry a hash of their contents (see
// staticNames), so they too can be cached for good.
//
//go:embed static
var staticFS embed.FS

// staticNames maps a file of static/ to the name it is served under
// below AssetPath ("init.js" → "init-1a2b3c4d5e6f.js").
var staticNames = map[string]string{}

type asset struct {
	data        []byte
	contentType string
	etag        string // strong ETag, from the sha256 of data
	sri         string // subresource-integrity value ("sha384-...")
}

// assets maps a file name (below AssetPath) to its contents.
var assets = func() map[string]*asset {
	entries, err := assetFS.ReadDir("assets")
	if err != nil {
		panic(err)
	}
	statics, err := staticFS.ReadDir("static")
	if err != nil {
		panic(err)
	}
	m := make(map[string]*asset, len(entries)+len(statics))
	type file struct {
		fs         embed.FS
		dir, name  string
		hashedName bool
	}
	var files []file
	for _, e := range entries {
		files = append(files, file{assetFS, "assets", e.Name(), false})
	}
	for _, e := range statics {
		files = append(files, file{staticFS, "static", e.Name(), true})
	}
	for _, f := range files {
		data, err := f.fs.ReadFile(f.dir + "/" + f.name)
		if err != nil {
			panic(err)
		}
		sum256 := sha256.Sum256(data)
		sum384 := sha512.Sum384(data)
		a := &asset{
			data: data,
			etag: `"` + hex.EncodeToString(sum256[:16]) + `"`,
			sri:  "sha384-" + base64.StdEncoding.EncodeToString(sum384[:]),
		}
		switch path.Ext(f.name) {
		case ".js":
			a.contentType = "text/javascript; charset=utf-8"
		case ".css":
			a.contentType = "text/css; charset=utf-8"
		case ".svg":
			a.contentType = "image/svg+xml"
		case ".ico":
			a.contentType = "image/x-icon"
		default:
			panic("graphiql: unexpected embedded asset " + f.name)
		}
		name := f.name
		if f.hashedName {
			ext := path.Ext(name)
			name = strings.TrimSuffix(name, ext) + "-" + hex.EncodeToString(sum256[:6]) + ext
			staticNames[f.name] = name
		}
		m[name] = a
	}
	for _, name := range []string{graphiqlJS, graphiqlCSS, reactJS, reactDOMJS} {
		if m[name] == nil {
			panic("graphiql: missing embedded asset " + name + " (run go generate ./internal/graphiql)")
		}
	}
	for _, name := range []string{"init.js", "favicon.svg", "favicon.ico"} {
		if staticNames[name] == "" {
			panic("graphiql: missing static/" + name)
		}
	}
	return m
}()

// Handler serves the GraphiQL page at "/" (exact path), its assets under
// AssetPath and the favicon at /favicon.ico. endpoint is the GraphQL
// endpoint the IDE sends queries to, usually a path on the same host such
// as "/query"; subscriptions go to the same URL over a websocket. Every
// other path is answered with 404.
//
// The IDE opens with the example tabs of Examples. A link may carry a
// prepared query (/?query=...&variables=...&operationName=...); headers
// are never read from or written to the URL, nor kept in localStorage, so
// an access token stays out of the browser's history and storage.
func Handler(title, endpoint string) http.Handler {
	cfg, err := json.Marshal(pageConfig{
		Endpoint:      endpoint,
		StoragePrefix: "socialgw:",
		Tabs:          Examples(),
	})
	if err != nil {
		panic(err)
	}
	ref := func(name string) assetRef { return assetRef{URL: AssetPath + name, SRI: assets[name].sri} }
	var page bytes.Buffer
	err = pageTemplate.Execute(&page, pageData{
		Title:      title,
		FaviconSVG: AssetPath + staticNames["favicon.svg"],
		CSS:        ref(graphiqlCSS),
		// React first: GraphiQL's UMD build needs the globals React and
		// ReactDOM; init.js needs all three.
		Scripts: []assetRef{ref(reactJS), ref(reactDOMJS), ref(graphiqlJS), ref(staticNames["init.js"])},
		Config:  template.JS(cfg),
	})
	if err != nil {
		panic(err)
	}
	html := page.Bytes()
	csp := contentSecurityPolicy(endpoint)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		_, _ = w.Write(html)
	})
	mux.HandleFunc("GET "+AssetPath+"{name}", serveAsset)
	// Browsers ask for /favicon.ico whatever page they show; its name
	// cannot carry a version, so it is revalidated daily.
	favicon := assets[staticNames["favicon.ico"]]
	mux.HandleFunc("GET /favicon.ico", func(w http.ResponseWriter, r *http.Request) {
		serve(w, r, favicon, "public, max-age=86400")
	})
	return mux
}

// pageConfig is what init.js reads from the page.
type pageConfig struct {
	Endpoint      string `json:"endpoint"`
	StoragePrefix string `json:"storagePrefix"`
	Tabs          []Tab  `json:"tabs"`
}

type assetRef struct{ URL, SRI string }

type pageData struct {
	Title      string
	FaviconSVG string
	CSS        assetRef
	Scripts    []assetRef
	Config     template.JS
}

//go:embed page.html
var pageHTML string

var pageTemplate = template.Must(template.New("graphiql").Parse(pageHTML))

func serveAsset(w http.ResponseWriter, r *http.Request) {
	a := assets[r.PathValue("name")]
	if a == nil {
		http.NotFound(w, r)
		return
	}
	// File names carry the package version or a content hash, so they
	// never change content.
	serve(w, r, a, "public, max-age=31536000, immutable")
}

func serve(w http.ResponseWriter, r *http.Request, a *asset, cacheControl string) {
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("ETag", a.etag)
	h.Set("Cache-Control", cacheControl)
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.data))
}

// contentSecurityPolicy allows the page to load code only from its own
// origin (no inline script: the page's settings are a JSON data block,
// which is not executed) and to talk only to its own
// origin and, if endpoint is an absolute URL, to the endpoint's origin.
func contentSecurityPolicy(endpoint string) string {
	connect := []string{"'self'"}
	if u, err := url.Parse(endpoint); err == nil && u.Scheme != "" && u.Host != "" {
		ws := "ws"
		if u.Scheme == "https" || u.Scheme == "wss" {
			ws = "wss"
		}
		connect = append(connect, u.Scheme+"://"+u.Host, ws+"://"+u.Host)
	}
	return fmt.Sprintf("default-src 'none'; script-src 'self'; "+
		"style-src 'self' 'unsafe-inline'; font-src 'self' data:; img-src 'self' data:; "+
		"connect-src %s; base-uri 'none'; form-action 'none'", strings.Join(connect, " "))
}
