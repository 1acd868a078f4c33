package gateway_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/trusted"
)

const listedMe = "query Me { me { id name } }"

// trustedServer is a test gateway that runs only listedMe.
func trustedServer(t *testing.T) (*gatewaytest.Server, gatewaytest.User) {
	t.Helper()
	m, _ := json.Marshal(map[string]string{trusted.Hash(listedMe): listedMe})
	docs, err := trusted.Parse(m)
	if err != nil {
		t.Fatal(err)
	}
	s := gatewaytest.New(t, gatewaytest.Options{Trusted: docs})
	return s, s.Register(t, "trusting")
}

// TestTrustedDocumentsHTTP: under trusted documents a listed document
// runs, sent whole (in any spelling) or by its hash alone; any other
// document is FORBIDDEN over POST and GET, and an unknown hash is
// PERSISTED_QUERY_NOT_FOUND.
func TestTrustedDocumentsHTTP(t *testing.T) {
	s, u := trustedServer(t)
	persisted := func(hash string) map[string]any {
		return map[string]any{"persistedQuery": map[string]any{"version": 1, "sha256Hash": hash}}
	}
	tests := []struct {
		name, method, query string
		extensions          map[string]any
		want                string // the error code; "" for the viewer's id
	}{
		{"listed, POST", "POST", listedMe, nil, ""},
		{"listed in another spelling", "POST", "query Me {\n  me { id\n name }\n}", nil, ""},
		{"listed, GET", "GET", listedMe, nil, ""},
		{"listed by hash alone", "POST", "", persisted(trusted.Hash(listedMe)), ""},
		{"listed by hash alone, GET", "GET", "", persisted(trusted.Hash(listedMe)), ""},
		{"listed, with its hash", "POST", listedMe, persisted(trusted.Hash(listedMe)), ""},
		{"unlisted, POST", "POST", "query Me { me { id name email } }", nil, "FORBIDDEN"},
		{"unlisted, GET", "GET", "{ me { id } }", nil, "FORBIDDEN"},
		{"unlisted mutation", "POST", "mutation { logout }", nil, "FORBIDDEN"},
		{"unlisted with its own hash", "POST", "{ me { id } }", persisted(trusted.Hash("{ me { id } }")), "FORBIDDEN"},
		{"unknown hash", "POST", "", persisted(trusted.Hash("{ me { id } }")), "PERSISTED_QUERY_NOT_FOUND"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := send(t, s.URL, u.Token, tt.method, tt.query, tt.extensions)
			if tt.want == "" {
				if id, _ := r.Get("me.id").(string); id != u.ID || len(r.Errors) > 0 {
					t.Fatalf("status %d, %+v: want the viewer's id", r.Status, r)
				}
				return
			}
			if r.Code() != tt.want || r.Data["me"] != nil {
				t.Fatalf("status %d, %+v: want %s and no data", r.Status, r, tt.want)
			}
		})
	}
}

// send sends a document over POST or GET.
func send(t *testing.T, base, token, method, query string, ext map[string]any) *gatewaytest.Response {
	t.Helper()
	var req *http.Request
	if method == "GET" {
		v := url.Values{"query": {query}}
		if ext != nil {
			b, _ := json.Marshal(ext)
			v.Set("extensions", string(b))
		}
		req, _ = http.NewRequest("GET", base+"/query?"+v.Encode(), nil)
	} else {
		b, _ := json.Marshal(map[string]any{"query": query, "extensions": ext})
		req, _ = http.NewRequest("POST", base+"/query", strings.NewReader(string(b)))
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	r := &gatewaytest.Response{Status: resp.StatusCode}
	if err := json.Unmarshal(body, r); err != nil {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	return r
}

// TestTrustedDocumentsWebsocket: on a websocket (graphql-transport-ws) a
// listed query runs and an unlisted subscription is refused FORBIDDEN.
func TestTrustedDocumentsWebsocket(t *testing.T) {
	s, u := trustedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(s.URL, "http")+"/query",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	write := func(v any) {
		b, _ := json.Marshal(v)
		if err := c.Write(ctx, websocket.MessageText, b); err != nil {
			t.Fatal(err)
		}
	}
	read := func(id string) map[string]any {
		for {
			_, b, err := c.Read(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]any
			_ = json.Unmarshal(b, &m)
			if m["type"] != "ping" && m["type"] != "pong" && (id == "" || m["id"] == id) {
				return m
			}
		}
	}
	write(map[string]any{"type": "connection_init", "payload": map[string]any{"Authorization": "Bearer " + u.Token}})
	if m := read(""); m["type"] != "connection_ack" {
		t.Fatalf("want connection_ack, got %v", m)
	}
	write(map[string]any{"id": "1", "type": "subscribe", "payload": map[string]any{"query": "subscription { timelineUpdated { id } }"}})
	m := read("1")
	b, _ := json.Marshal(m)
	// gqlgen answers a refused document as it answers an invalid one.
	if !strings.Contains(string(b), `"code":"FORBIDDEN"`) || strings.Contains(string(b), `"timelineUpdated"`) {
		t.Fatalf("unlisted subscription: %s, want an error FORBIDDEN and no data", b)
	}
	write(map[string]any{"id": "2", "type": "subscribe", "payload": map[string]any{"query": listedMe}})
	m = read("2")
	b, _ = json.Marshal(m)
	if m["type"] != "next" || !strings.Contains(string(b), u.ID) {
		t.Fatalf("listed query: %s, want its data", b)
	}
}
