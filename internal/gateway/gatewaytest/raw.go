package gatewaytest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/socialgw/gateway/internal/social"
)

// Raw sends a raw request to the server and returns the status, headers
// and body of the answer.
func (s *Server) Raw(tb testing.TB, method, path string, header map[string]string, body io.Reader) (int, http.Header, []byte) {
	tb.Helper()
	req, err := http.NewRequestWithContext(context.Background(), method, s.URL+path, body)
	if err != nil {
		tb.Fatal(err)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatalf("read %s %s: %v", method, path, err)
	}
	return resp.StatusCode, resp.Header, b
}

// Decode decodes a GraphQL response body.
func Decode(tb testing.TB, status int, body []byte) *Response {
	tb.Helper()
	r := &Response{Status: status}
	if err := json.Unmarshal(body, r); err != nil {
		tb.Fatalf("status %d, body %q: %v", status, body, err)
	}
	return r
}

// Send sends req and decodes its GraphQL response.
func Send(tb testing.TB, req *http.Request) *Response {
	tb.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	out := &Response{Status: resp.StatusCode}
	if err := json.Unmarshal(b, out); err != nil {
		tb.Fatalf("decode (status %d): %v\n%s", resp.StatusCode, err, b)
	}
	return out
}

// WantCode checks the extensions.code of the first error.
func (r *Response) WantCode(tb testing.TB, code string) {
	tb.Helper()
	if r.Code() != code {
		tb.Errorf("code = %q (errors %+v), want %s", r.Code(), r.Errors, code)
	}
}

// Quote returns s as a JSON string.
func Quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// MustUser loads a user straight from the store.
func (s *Server) MustUser(tb testing.TB, id string) *social.User {
	tb.Helper()
	u, err := s.Store.User(context.Background(), id)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

// WSMessage is a message of graphql-transport-ws (and graphql-ws).
type WSMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// WSURL is the server's websocket address of /query.
func (s *Server) WSURL() string { return "ws" + strings.TrimPrefix(s.URL, "http") + "/query" }

// WSSend writes a message.
func WSSend(ctx context.Context, tb testing.TB, c *websocket.Conn, m WSMessage) {
	tb.Helper()
	if err := wsjson.Write(ctx, c, m); err != nil {
		tb.Fatalf("send %s: %v", m.Type, err)
	}
}

// WSNext reads the next message other than a ping, answering pings as a
// graphql-transport-ws client does.
func WSNext(ctx context.Context, c *websocket.Conn) (WSMessage, error) {
	for {
		var m WSMessage
		if err := wsjson.Read(ctx, c, &m); err != nil {
			return m, err
		}
		if m.Type == "ping" {
			_ = wsjson.Write(ctx, c, WSMessage{Type: "pong"})
		}
		if m.Type != "ping" && m.Type != "ka" {
			return m, nil
		}
	}
}
