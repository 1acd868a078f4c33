package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/99designs/gqlgen/graphql"
	"github.com/99designs/gqlgen/graphql/errcode"
	"github.com/vektah/gqlparser/v2/gqlerror"
)

// httpTransport serves GET and POST requests as gqlgen's transport.GET and
// transport.POST do (differential_test.go compares them over a corpus),
// with these differences:
//   - the parameters are not decoded again: readParams has decoded the
//     body or the URL's parameters as gqlgen would (numbers as
//     json.Number), and refused what gqlgen would answer with a message
//     naming Go types, so they come from the request's context; a request
//     without them is not this transport's;
//   - a request error (the document did not parse or validate, its
//     variables did not coerce) is answered as GraphQL-over-HTTP says:
//     without a data entry, and with status 200 for application/json
//     (gqlgen says 422);
//   - a response with data only is written as {"data":…} around the bytes
//     execution rendered. gqlgen's transports marshal the whole response,
//     and encoding/json validates and compacts those bytes again: 4 % of
//     the CPU of a timeline page at saturation. The bytes written are the
//     same (writeResponse). Responses with errors or extensions are
//     marshalled as gqlgen does.
//
// What GET may carry is measure's to decide, before anything executes.
type httpTransport struct{}

func (httpTransport) Supports(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodPost) && paramsFrom(r.Context()) != nil
}

func (httpTransport) Do(w http.ResponseWriter, r *http.Request, exec graphql.GraphExecutor) {
	start := graphql.Now()
	ctx := r.Context()
	contentType := responseContentType(r.Header.Get("Accept"))
	w.Header().Set("Content-Type", contentType)
	// A copy: the persisted-query extension fills in the query.
	params := *paramsFrom(ctx).raw
	params.Headers = r.Header
	params.ReadTime = graphql.TraceTiming{Start: start, End: graphql.Now()}
	oc, errs := exec.CreateOperationContext(ctx, &params)
	if errs != nil {
		resp := exec.DispatchError(graphql.WithOperationContext(ctx, oc), errs)
		if errcode.GetErrorKind(errs) != errcode.KindProtocol {
			w.WriteHeader(http.StatusOK)
			writeResponse(w, resp)
			return
		}
		// A request error: 400 where the client asked for
		// graphql-response+json, 200 otherwise; no data entry.
		status := http.StatusOK
		if contentType == graphqlResponseJSON {
			status = http.StatusBadRequest
		}
		w.WriteHeader(status)
		b, err := json.Marshal(requestError{Errors: resp.Errors, Extensions: resp.Extensions})
		if err != nil {
			panic(err) // as gqlgen's transport: a response that is not JSON is a bug
		}
		_, _ = w.Write(b)
		return
	}
	responses, ctx := exec.DispatchOperation(ctx, oc)
	writeResponse(w, responses(ctx))
}

// requestError is the response to a request error: errors, and no data.
type requestError struct {
	Errors     gqlerror.List  `json:"errors"`
	Extensions map[string]any `json:"extensions,omitempty"`
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
		// before its first event (internal/gqlerr/stream.go): gqlgen writes null.
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
