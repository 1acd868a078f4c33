package httpapi

import (
	"context"
	"mime"
	"net/http"

	"github.com/99designs/gqlgen/graphql"
)

// requestParams are the GraphQL parameters of an HTTP request, decoded
// once, as gqlgen's transports would decode them (numbers as
// json.Number): the transport executes them from the context.
type requestParams struct {
	raw *graphql.RawParams
	// persisted: the request names a persisted query (its document may
	// be absent); hash is its sha256Hash.
	persisted bool
	hash      string
	// upload holds a multipart request's files (nil for others).
	upload *multipartBody
}

type paramsKey struct{}

func paramsFrom(ctx context.Context) *requestParams {
	p, _ := ctx.Value(paramsKey{}).(*requestParams)
	return p
}

func withParams(ctx context.Context, p *requestParams) context.Context {
	return context.WithValue(ctx, paramsKey{}, p)
}

func newParams(raw *graphql.RawParams) *requestParams {
	return &requestParams{raw: raw, persisted: raw.Extensions["persistedQuery"] != nil, hash: persistedHash(raw.Extensions)}
}

// persistedHash is the sha256Hash of a request's persistedQuery
// extension, or "".
func persistedHash(ext map[string]any) string {
	pq, _ := ext["persistedQuery"].(map[string]any)
	h, _ := pq["sha256Hash"].(string)
	return h
}

// readParams is the middleware that decodes a request's parameters: from
// the URL of a GET (get.go), from a POST's JSON body (post.go) or from
// the operations part of a multipart POST that uploads files
// (multipart.go). Any other method gets 405, any other POST 415: there is
// no form transport, which would let a browser send a mutation cross-site
// without a CORS preflight (multipart needs a header that forces one).
//
// A POST's body, JSON or multipart, is read at pace (bodypace.go) into
// memory reserved in bodies as it arrives (bodies.go).
func readParams(maxBody int64, bodies *bodyBudget, pace bodyPace, uploads uploadCheck) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			var p *requestParams
			var f *refusal
			var paced *pacedBody
			if r.Method == http.MethodPost {
				paced = paceBody(w, r, pace)
			}
			switch mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); {
			case r.Method == http.MethodGet:
				p, f = getParams(r)
			case r.Method != http.MethodPost:
				f = refuse(http.StatusMethodNotAllowed, "use GET for queries or POST").with("Allow", "GET, POST")
			case mt == "application/json":
				p, f = postParams(w, r, maxBody, bodies)
			case mt == "multipart/form-data":
				p, f = multipartParams(w, r, maxBody, bodies, uploads)
				// Files are spooled to temporary files, removed once the
				// request is answered.
				if p != nil {
					defer p.upload.remove()
				}
			default:
				f = refuse(http.StatusUnsupportedMediaType,
					"POST bodies must be application/json (multipart/form-data for a mutation that uploads files)")
			}
			paced.done() // the body is read
			if f == nil && p.raw.Query == "" && !p.persisted {
				f = refuse(http.StatusBadRequest, "the request has no query")
			}
			if f != nil {
				f.write(w)
				return
			}
			next.ServeHTTP(w, r.WithContext(withParams(r.Context(), p)))
		})
	}
}
