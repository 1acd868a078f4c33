// Package graphiql serves the GraphiQL IDE from assets embedded in the binary.
//
// The page is rendered by gqlgen's playground package, but every script and
// stylesheet it references is served by this package from files embedded with
// go:embed (see assets/ and fetch-assets.sh), so the IDE works without
// internet access. Subresource-integrity hashes are computed from the embedded
// bytes at start-up.
package graphiql

//go:generate ./fetch-assets.sh

import (
	"bytes"
	"crypto/sha256"
	"crypto/sha512"
	"embed"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/99designs/gqlgen/graphql/playground"
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
	m := make(map[string]*asset, len(entries))
	for _, e := range entries {
		data, err := assetFS.ReadFile("assets/" + e.Name())
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
		switch path.Ext(e.Name()) {
		case ".js":
			a.contentType = "text/javascript; charset=utf-8"
		case ".css":
			a.contentType = "text/css; charset=utf-8"
		default:
			panic("graphiql: unexpected embedded asset " + e.Name())
		}
		m[e.Name()] = a
	}
	for _, name := range []string{graphiqlJS, graphiqlCSS, reactJS, reactDOMJS} {
		if m[name] == nil {
			panic("graphiql: missing embedded asset " + name + " (run go generate ./internal/graphiql)")
		}
	}
	return m
}()

// Handler serves the GraphiQL page at "/" (exact path) and its assets under
// AssetPath. endpoint is the GraphQL endpoint the IDE sends queries to,
// usually a path on the same host such as "/query". Every other path is
// answered with 404.
//
// The query, variables, headers and operation name are kept in the page's
// URL (?query=...), so a link can open the IDE with a prepared query.
func Handler(title, endpoint string) http.Handler {
	page := playground.Handler(title, endpoint,
		playground.WithGraphiqlVersion(
			AssetPath+graphiqlJS, AssetPath+graphiqlCSS,
			assets[graphiqlJS].sri, assets[graphiqlCSS].sri),
		playground.WithGraphiqlReactVersion(
			AssetPath+reactJS, AssetPath+reactDOMJS,
			assets[reactJS].sri, assets[reactDOMJS].sri),
		// The explorer plugin would be loaded from a CDN.
		playground.WithGraphiqlEnablePluginExplorer(false),
		playground.WithGraphiqlPersistStateInURL(true),
	)
	csp := contentSecurityPolicy(endpoint)

	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-cache")
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		page(w, r)
	})
	mux.HandleFunc("GET "+AssetPath+"{name}", serveAsset)
	return mux
}

func serveAsset(w http.ResponseWriter, r *http.Request) {
	a := assets[r.PathValue("name")]
	if a == nil {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.contentType)
	h.Set("ETag", a.etag)
	// File names carry the package version, so they never change content.
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.data))
}

// contentSecurityPolicy allows the page to load code only from its own
// origin (plus its inline bootstrap script) and to talk only to its own
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
	return fmt.Sprintf("default-src 'none'; script-src 'self' 'unsafe-inline'; "+
		"style-src 'self' 'unsafe-inline'; font-src 'self' data:; img-src 'self' data:; "+
		"connect-src %s; base-uri 'none'; form-action 'none'", strings.Join(connect, " "))
}
