package httpapi_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

func TestTransports(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "http")
	typename := `{"query": "{ __typename }"}`
	get := func(doc string) string { return "/query?query=" + url.QueryEscape(doc) }
	form := url.Values{"query": {"{ __typename }"}}.Encode()
	var mp bytes.Buffer
	mw := multipart.NewWriter(&mp)
	_ = mw.WriteField("operations", typename)
	_ = mw.Close()

	tests := []struct {
		name, method, path string
		header             map[string]string
		body               string
		status             int
		contentType        string // of the answer, when checked
		typename           bool   // the answer carries data.__typename
	}{
		{"POST application/json", "POST", "/query", map[string]string{"Content-Type": jsonType}, typename, 200, jsonType, true},
		{"POST json with charset", "POST", "/query", map[string]string{"Content-Type": jsonType + "; charset=utf-8"}, typename, 200, jsonType, true},
		{"POST accepting graphql-response+json", "POST", "/query",
			map[string]string{"Content-Type": jsonType, "Accept": "application/graphql-response+json"}, typename, 200, "application/graphql-response+json", true},
		{"POST accepting application/json", "POST", "/query",
			map[string]string{"Content-Type": jsonType, "Accept": "application/json"}, typename, 200, jsonType, true},
		{"GET query", "GET", get("{ __typename }"), nil, "", 200, jsonType, true},
		{"GET accepting graphql-response+json", "GET", get("{ __typename }"),
			map[string]string{"Accept": "application/graphql-response+json"}, "", 200, "application/graphql-response+json", true},
		{"GET mutation refused", "GET", get(`mutation { updateProfile(input: {bio: "via GET"}) { bio } }`),
			map[string]string{"Authorization": "Bearer " + u.Token}, "", http.StatusMethodNotAllowed, jsonType, false},
		{"POST text/plain refused", "POST", "/query", map[string]string{"Content-Type": "text/plain"}, typename, 415, jsonType, false},
		{"POST form refused", "POST", "/query", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, form, 415, jsonType, false},
		// Multipart is a "simple" request a page of any site may send: only
		// with a header that forces a CORS preflight (media_test.go).
		{"POST multipart without a preflight header refused", "POST", "/query", map[string]string{"Content-Type": mw.FormDataContentType()}, mp.String(), 400, jsonType, false},
		{"POST multipart query refused", "POST", "/query", map[string]string{"Content-Type": mw.FormDataContentType(),
			"GraphQL-Require-Preflight": "1", "Authorization": "Bearer " + u.Token}, mp.String(), 400, jsonType, false},
		{"POST application/graphql refused", "POST", "/query", map[string]string{"Content-Type": "application/graphql"}, "{ __typename }", 415, jsonType, false},
		{"POST without content type refused", "POST", "/query", nil, typename, 415, jsonType, false},
		{"PUT refused", "PUT", "/query", map[string]string{"Content-Type": jsonType}, typename, http.StatusMethodNotAllowed, jsonType, false},
		{"DELETE refused", "DELETE", "/query", nil, "", http.StatusMethodNotAllowed, jsonType, false},
		{"POST bad JSON", "POST", "/query", map[string]string{"Content-Type": jsonType}, `{"query": `, 400, jsonType, false},
		{"POST batch array refused", "POST", "/query", map[string]string{"Content-Type": jsonType}, `[{"query":"{ __typename }"}]`, 400, jsonType, false},
		{"POST non-string query refused", "POST", "/query", map[string]string{"Content-Type": jsonType}, `{"query": 123}`, 400, jsonType, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, h, body := s.Raw(t, tt.method, tt.path, tt.header, strings.NewReader(tt.body))
			if status != tt.status {
				t.Fatalf("status %d, want %d; body %s", status, tt.status, body)
			}
			if ct, _, _ := strings.Cut(h.Get("Content-Type"), ";"); tt.contentType != "" && ct != tt.contentType {
				t.Errorf("Content-Type %q, want %q", h.Get("Content-Type"), tt.contentType)
			}
			r := gatewaytest.Decode(t, status, body)
			if got := r.Str("__typename"); tt.typename && got != "Query" {
				t.Errorf("data %v, want __typename Query", r.Data)
			}
			if !tt.typename && (len(r.Errors) == 0 || r.Data != nil) {
				t.Errorf("want only errors, got %s", body)
			}
			if !tt.typename && r.Code() == "" {
				t.Errorf("%d without extensions.code: %s", status, body)
			}
			if strings.Contains(string(body), "Go value") || strings.Contains(string(body), "RawParams") {
				t.Errorf("error leaks Go internals: %s", body)
			}
			if h.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(h.Get("Cache-Control"), "no-") {
				t.Errorf("headers %v: want nosniff and no caching", h)
			}
		})
	}
	if bio := s.MustDo(t, "", `{ user(id: "`+u.ID+`") { bio } }`, nil).Get("user.bio"); bio != nil {
		t.Errorf("a mutation sent by GET ran: bio = %v", bio)
	}
}

func TestBodyLimit(t *testing.T) {
	s := gatewaytest.New(t)
	const limit = 1 << 20
	// A valid document padded with a comment to exactly n bytes of body.
	body := func(n int) string {
		head, tail := `{"query": "{ __typename } #`, `"}`
		return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
	}
	tests := []struct {
		name    string
		body    io.Reader
		status  int
		chunked bool
	}{
		{"exactly 1 MiB", strings.NewReader(body(limit)), 200, false},
		{"1 MiB and a byte", strings.NewReader(body(limit + 1)), 413, false},
		{"10 MiB", strings.NewReader(body(10 * limit)), 413, false},
		{"1 MiB and a byte, chunked", io.MultiReader(strings.NewReader(body(limit + 1))), 413, true},
		{"exactly 1 MiB, chunked", io.MultiReader(strings.NewReader(body(limit))), 200, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			status, _, b := s.Raw(t, "POST", "/query", map[string]string{"Content-Type": jsonType}, tt.body)
			if status != tt.status {
				t.Fatalf("status %d, want %d", status, tt.status)
			}
			r := gatewaytest.Decode(t, status, b)
			if tt.status == 200 && r.Str("__typename") != "Query" {
				t.Errorf("response %s", b)
			}
			if tt.status == 413 && r.Code() != "BAD_USER_INPUT" {
				t.Errorf("413 response %s", b)
			}
		})
	}
}

func TestDocumentErrors(t *testing.T) {
	s := gatewaytest.New(t)
	tests := []struct {
		name, doc string
		vars      map[string]any
		code      string
	}{
		{"parse error", `{ me { id }`, nil, "GRAPHQL_PARSE_FAILED"},
		{"unknown field", `{ nope }`, nil, "GRAPHQL_VALIDATION_FAILED"},
		{"missing argument", `{ post { id } }`, nil, "GRAPHQL_VALIDATION_FAILED"},
		{"variable of the wrong type", `query($f: Int) { timeline(first: $f) { pageInfo { hasNextPage } } }`, map[string]any{"f": "ten"}, "GRAPHQL_VALIDATION_FAILED"},
		{"complexity over the limit",
			`{ timeline(first: 100) { edges { node { likers(first: 100) { edges { node { id name } } } } } } }`, nil, "COMPLEXITY_LIMIT_EXCEEDED"},
		// Nested too deep for the depth limit, checked first; the cost's
		// saturation is internal/gqlguard's test.
		{"complexity overflowing int64", overflowingDocument(), nil, "GRAPHQL_VALIDATION_FAILED"},
		{"complexity under the limit", `{ user(id: "1") { followers(first: 100) { edges { node { id name } } } } }`, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := s.Do(t, "", tt.doc, tt.vars)
			wantCode(t, r, tt.code)
			if tt.code != "" && r.Data != nil {
				t.Errorf("data %v alongside a document error", r.Data)
			}
		})
	}
}

// overflowingDocument nests pages of followers, none larger than 100 items
// (so every level would run), with scalar siblings chosen so that the
// outermost page's cost, 1 + 100×(2 + inner), wraps around the int range to
// a small number unless the cost saturates.
func overflowingDocument() string {
	// 2 + inner = ⌈2⁶⁴/100⌉, so 100×(2 + inner) = 2⁶⁴ + 84.
	const target = 184467440737095517 - 2
	// node { s×id followers(first: 100) { edges { node { … } } } } costs
	// s + 1 + 100×(2 + inner) = s + 201 + 100×inner.
	var siblings []int
	c := target
	for c > 300 {
		s := (c - 201) % 100
		siblings = append(siblings, s)
		c = (c - 201 - s) / 100
	}
	scalars := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "a%d: id ", i)
		}
		return b.String()
	}
	inner := scalars(c)
	for i := len(siblings) - 1; i >= 0; i-- {
		inner = scalars(siblings[i]) + "followers(first: 100) { edges { node { " + inner + "} } } "
	}
	return `{ user(id: "1") { followers(first: 100) { edges { node { ` + inner + `} } } } }`
}

func TestPersistedQueries(t *testing.T) {
	s := gatewaytest.New(t)
	const doc = `{ __typename }`
	sum := sha256.Sum256([]byte(doc))
	hash := hex.EncodeToString(sum[:])
	ext := func(h string) string {
		return `"extensions": {"persistedQuery": {"version": 1, "sha256Hash": "` + h + `"}}`
	}
	steps := []struct {
		name, body, code string
	}{
		{"unknown hash", `{` + ext(hash) + `}`, "PERSISTED_QUERY_NOT_FOUND"},
		{"hash that does not match the query", `{"query": "{ me { id } }", ` + ext(hash) + `}`, "BAD_USER_INPUT"},
		{"register the query", `{"query": ` + gatewaytest.Quote(doc) + `, ` + ext(hash) + `}`, ""},
		{"known hash", `{` + ext(hash) + `}`, ""},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			status, _, b := s.Raw(t, "POST", "/query", map[string]string{"Content-Type": jsonType}, strings.NewReader(st.body))
			r := gatewaytest.Decode(t, status, b)
			wantCode(t, r, st.code)
			if st.code == "" && r.Str("__typename") != "Query" {
				t.Errorf("response %s", b)
			}
		})
	}
}

// TestInternalErrorsMasked cuts the server off from Redis: clients see
// "internal server error" with INTERNAL_SERVER_ERROR and no Redis text.
func TestInternalErrorsMasked(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "mask")
	if err := s.Redis.Close(); err != nil {
		t.Fatal(err)
	}
	leaks := func(t *testing.T, body []byte) {
		t.Helper()
		for _, w := range []string{"redis", "closed", "dial", "revocation", "look up"} {
			if bytes.Contains(bytes.ToLower(body), []byte(w)) {
				t.Errorf("response leaks %q: %s", w, body)
			}
		}
	}
	tests := []struct {
		name, token, doc string
		status           int
	}{
		{"anonymous query", "", `{ user(name: "someone") { id } }`, 200},
		{"login", "", `mutation { login(input: {login: "` + u.Name + `", password: "whatever1"}) { accessToken } }`, 200},
		{"register", "", authRegisterDoc, 200},
		{"authenticated request", u.Token, `{ me { id } }`, http.StatusServiceUnavailable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vars := map[string]any{}
			if tt.doc == authRegisterDoc {
				vars = registerVars("mask_new", "mask_new@example.com", "password123")
			}
			body, _ := json.Marshal(map[string]any{"query": tt.doc, "variables": vars})
			h := map[string]string{"Content-Type": jsonType}
			if tt.token != "" {
				h["Authorization"] = "Bearer " + tt.token
			}
			status, _, b := s.Raw(t, "POST", "/query", h, bytes.NewReader(body))
			if status != tt.status {
				t.Errorf("status %d, want %d", status, tt.status)
			}
			r := gatewaytest.Decode(t, status, b)
			if r.Code() != "INTERNAL_SERVER_ERROR" || r.Errors[0].Message != "internal server error" {
				t.Errorf("errors %+v, want the masked internal error", r.Errors)
			}
			leaks(t, b)
		})
	}
	t.Run("websocket connection_init", func(t *testing.T) {
		// The legacy graphql-ws protocol sends the init error to the client.
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, _, err := websocket.Dial(ctx, s.WSURL(), &websocket.DialOptions{Subprotocols: []string{"graphql-ws"}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.CloseNow()
		gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{Type: "connection_init", Payload: json.RawMessage(`{"Authorization": "Bearer ` + u.Token + `"}`)})
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				var ce websocket.CloseError
				if errors.As(err, &ce) {
					leaks(t, []byte(ce.Reason))
				}
				break
			}
			leaks(t, b)
			if bytes.Contains(b, []byte("connection_ack")) {
				t.Errorf("connection acknowledged without a working Redis: %s", b)
			}
		}
	})
}

// TestWebsocketAuth: the viewer of a socket comes from the connection_init
// payload (or the upgrade request); a bad token closes the socket with
// 4403 instead of continuing as anonymous.
func TestWebsocketAuth(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "sock")
	gone := s.Register(t, "gone")
	s.MustDo(t, gone.Token, authLogoutDoc, nil)

	tests := []struct {
		name      string
		header    http.Header
		init      string
		dialCode  int    // HTTP status when the upgrade itself is refused
		closeCode int    // websocket close status when connection_init is refused
		me        string // the name me answers with; "" for null
	}{
		{"token in connection_init", nil, `{"Authorization": "Bearer ` + u.Token + `"}`, 0, 0, u.Name},
		{"lower-case key", nil, `{"authorization": "Bearer ` + u.Token + `"}`, 0, 0, u.Name},
		{"token in the upgrade request", http.Header{"Authorization": {"Bearer " + u.Token}}, `{}`, 0, 0, u.Name},
		{"no token", nil, `{}`, 0, 0, ""},
		{"no payload", nil, ``, 0, 0, ""},
		{"bad token in connection_init", nil, `{"Authorization": "Bearer garbage"}`, 0, 4403, ""},
		{"token without scheme", nil, `{"Authorization": "` + u.Token + `"}`, 0, 4403, ""},
		{"logged-out token", nil, `{"Authorization": "Bearer ` + gone.Token + `"}`, 0, 4403, ""},
		{"bad init token beats a good upgrade header", http.Header{"Authorization": {"Bearer " + u.Token}},
			`{"Authorization": "Bearer garbage"}`, 0, 4403, ""},
		{"bad token in the upgrade request", http.Header{"Authorization": {"Bearer garbage"}}, `{}`, 401, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c, resp, err := websocket.Dial(ctx, s.WSURL(), &websocket.DialOptions{
				Subprotocols: []string{"graphql-transport-ws"}, HTTPHeader: tt.header,
			})
			if tt.dialCode != 0 {
				if err == nil {
					c.CloseNow()
					t.Fatal("upgrade accepted")
				}
				if resp == nil || resp.StatusCode != tt.dialCode {
					t.Fatalf("upgrade: %v (response %v), want status %d", err, resp, tt.dialCode)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			if c.Subprotocol() != "graphql-transport-ws" {
				t.Fatalf("subprotocol %q", c.Subprotocol())
			}
			init := gatewaytest.WSMessage{Type: "connection_init"}
			if tt.init != "" {
				init.Payload = json.RawMessage(tt.init)
			}
			gatewaytest.WSSend(ctx, t, c, init)
			m, err := gatewaytest.WSNext(ctx, c)
			if tt.closeCode != 0 {
				if err == nil {
					t.Fatalf("connection_init accepted: %+v", m)
				}
				if code := websocket.CloseStatus(err); int(code) != tt.closeCode {
					t.Fatalf("closed with %v (%v), want %d", code, err, tt.closeCode)
				}
				return
			}
			if err != nil || m.Type != "connection_ack" {
				t.Fatalf("after connection_init: %+v, %v; want connection_ack", m, err)
			}
			gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{ID: "1", Type: "subscribe", Payload: json.RawMessage(`{"query": "{ me { name } }"}`)})
			m, err = gatewaytest.WSNext(ctx, c)
			if err != nil || m.Type != "next" || m.ID != "1" {
				t.Fatalf("after subscribe: %+v, %v; want next", m, err)
			}
			var p struct {
				Data struct {
					Me *struct{ Name string } `json:"me"`
				} `json:"data"`
				Errors []any `json:"errors"`
			}
			if err := json.Unmarshal(m.Payload, &p); err != nil || len(p.Errors) > 0 {
				t.Fatalf("payload %s: %v", m.Payload, err)
			}
			switch {
			case tt.me == "" && p.Data.Me != nil, tt.me != "" && (p.Data.Me == nil || p.Data.Me.Name != tt.me):
				t.Errorf("me = %s, want %q", m.Payload, tt.me)
			}
			if m, err := gatewaytest.WSNext(ctx, c); err != nil || m.Type != "complete" {
				t.Errorf("after next: %+v, %v; want complete", m, err)
			}
			c.Close(websocket.StatusNormalClosure, "")
		})
	}
}

func TestSSE(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "sse")
	status, h, body := s.Raw(t, "POST", "/query", map[string]string{
		"Content-Type": jsonType, "Accept": "text/event-stream", "Authorization": "Bearer " + u.Token,
	}, strings.NewReader(`{"query": "{ me { name } }"}`))
	if status != 200 || !strings.HasPrefix(h.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("status %d, Content-Type %q", status, h.Get("Content-Type"))
	}
	data := sseData(t, body)
	r := gatewaytest.Decode(t, status, data)
	if r.Str("me.name") != u.Name {
		t.Errorf("data %s, want me.name %s", data, u.Name)
	}
}

// TestHugeFirstIsBadInput checks that a page size beyond the maximum is
// refused as bad input, not as an over-complex query, however large.
func TestHugeFirstIsBadInput(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "pager")
	for _, first := range []int{101, 20001, 2147483647} {
		r := s.Do(t, u.Token, `query($n: Int) { timeline(first: $n) { edges { cursor } } }`, map[string]any{"n": first})
		if r.Code() != "BAD_USER_INPUT" {
			t.Errorf("first=%d: code %q, want BAD_USER_INPUT", first, r.Code())
		}
	}
}

// TestRequestDeadline checks that a Redis that stops answering does not
// hold requests: the request deadline bounds every Redis call, and the
// client gets a masked INTERNAL_SERVER_ERROR soon after it.
func TestRequestDeadline(t *testing.T) {
	url := gatewaytest.Serve(t, stalledGateway(t).NewQueryHandler(gateway.QueryOptions{MaxBodyBytes: 1 << 20, RequestTimeout: 300 * time.Millisecond}))

	start := time.Now()
	r := gatewaytest.Post(t, url, "", `{ user(name: "someone") { id } }`, nil)
	if elapsed := time.Since(start); elapsed > 5*time.Second {
		t.Errorf("the request took %v with a stalled Redis; the 300ms deadline should bound it", elapsed)
	}
	// Whichever ends first, the deadline or the Redis call it cancels, the
	// answer is one GraphQL error without Redis's words.
	if r.Code() != "INTERNAL_SERVER_ERROR" || (r.Errors[0].Message != "service temporarily unavailable; retry shortly" && r.Errors[0].Message != "the request took longer than 300ms and was stopped") {
		t.Errorf("got %+v, want the masked error that says the service is temporarily unavailable", r.Errors)
	}
}
