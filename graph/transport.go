package graph

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// httpTransport serves GET and POST requests as gqlgen's transport.GET and
// transport.POST do, with two costs fewer on every request
// (docs/performance.md, "The gateway against Redis alone"):
//   - the parameters are not decoded again: limitBody has decoded the body
//     or the URL's parameters as gqlgen would (numbers as json.Number),
//     and refused what gqlgen would answer with a message naming Go
//     types, so they come from the request's context;
//   - a response with data only is written as {"data":…} around the bytes
//     execution rendered. gqlgen's transports marshal the whole response,
//     and encoding/json validates and compacts those bytes again: 4 % of
//     the CPU of a timeline page at saturation. The bytes written are the
//     same (writeResponse). Responses with errors or extensions are
//     marshalled as gqlgen does.
//
// A request that did not come through limitBody (none in this handler) is
// left to gqlgen's transports.
type httpTransport struct {
	get  transport.GET
	post transport.POST
}

func (t httpTransport) Supports(r *http.Request) bool {
	return t.get.Supports(r) || t.post.Supports(r) || multipartChecked(r)
}

// multipartChecked reports whether r is a multipart POST whose parameters
// limitBody decoded (its files attached to them): executed as a JSON POST.
func multipartChecked(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	c, _ := r.Context().Value(checkedKey{}).(*checked)
	return r.Method == http.MethodPost && mt == "multipart/form-data" && c != nil && c.params != nil
}

func (t httpTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	get := r.Method == http.MethodGet
	c, _ := r.Context().Value(checkedKey{}).(*checked)
	if c == nil || c.params == nil {
		if get {
			t.get.Do(w, r, exec)
		} else {
			t.post.Do(w, r, exec)
		}
		return
	}
	start := graphql.Now()
	ctx := r.Context()
	contentType := responseContentType(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", contentType)
	// A copy: the persisted-query extension fills in the query.
	params := *c.params
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	oc, errs := exec.CreateOperationContext(ctx, &params)
	if errs != nil {
		status := http.StatusOK
		if errcode.GetErrorKind(errs) == errcode.KindProtocol {
			// As gqlgen's transports: 400 where the client asked for
			// graphql-response+json, 422 otherwise.
			status = http.StatusUnprocessableEntity
			if contentType == graphqlResponseJSON {
				status = http.StatusBadRequest
			}
		}
		w.WriteHeader(status)
		writeResponse(w, exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs))
		return
	}
	if get && oc.Operation.Operation != ast.Query {
		// As gqlgen's GET (getOnlyQueries refuses these first, with a
		// code).
		w.WriteHeader(http.StatusNotAcceptable)
		writeResponse(w, &graphql.Response{Errors: gqlerror.List{{Message: "GET requests only allow query operations"}}})
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, oc)
	writeResponse(w, responses(ctx))
}

const graphqlResponseJSON = "application/graphql-response+json"

// responseContentType is the media type of the response to a request with
// this Accept header, chosen as gqlgen's transports choose it: the first
// of application/json and application/graphql-response+json the client
// names, application/json for no header or a wildcard, and
// graphql-response+json when it names neither.
func responseContentType(accept string) string {
	if accept == "" {
		return "application/json"
	}
	for part := range strings.SplitSeq(accept, ",") {
		mt, _, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		switch mt {
		case "*/*", "application/*", "application/json":
			return "application/json"
		case graphqlResponseJSON:
			return graphqlResponseJSON
		}
	}
	return graphqlResponseJSON
}

// writeResponse writes a GraphQL response as gqlgen's transport wrote it
// (json.Marshal), byte for byte: a response with data only around the
// rendered data, which gqlgen's marshalers wrote as valid, compact JSON,
// with what encoding/json escapes escaped (writeHTMLEscaped); any other as
// encoding/json marshals it.
func writeResponse(w io.Writer, resp *graphql.Response) {
	if resp == nil {
		// A subscription asked for without an event stream that ended
		// before its first event (stream.go): gqlgen writes null.
		_, _ = io.WriteString(w, "null")
		return
	}
	if len(resp.Errors) == 0 && len(resp.Extensions) == 0 && resp.Label == "" && len(resp.Path) == 0 && resp.HasNext == nil {
		data := resp.Data
		if data == nil {
			data = json.RawMessage("null")
		}
		_, _ = io.WriteString(w, `{"data":`)
		writeHTMLEscaped(w, data)
		_, _ = io.WriteString(w, "}")
		return
	}
	b, err := json.Marshal(resp)
	if err != nil {
		// As gqlgen's transport: rendered data that is not JSON is a bug.
		panic(err)
	}
	_, _ = w.Write(b)
}

// writeHTMLEscaped writes JSON text with <, > and & written \u003c,
// \u003e and \u0026, and U+2028 and U+2029 written \u2028 and \u2029,
// as encoding/json writes every response it marshals: a response that a
// browser is somehow led to read as HTML or script holds no markup. In
// JSON these can only be inside strings, so they are escaped wherever
// they are. Most pages hold none of them, which four vectorised scans
// tell (0xE2 leads the UTF-8 of both separators).
func writeHTMLEscaped(w io.Writer, data []byte) {
	if bytes.IndexByte(data, '<') < 0 && bytes.IndexByte(data, '>') < 0 &&
		bytes.IndexByte(data, '&') < 0 && bytes.IndexByte(data, 0xE2) < 0 {
		_, _ = w.Write(data)
		return
	}
	var b bytes.Buffer
	b.Grow(len(data) + len(data)/8)
	json.HTMLEscape(&b, data)
	_, _ = w.Write(b.Bytes())
}
