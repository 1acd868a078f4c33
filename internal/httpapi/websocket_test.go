package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/coder/websocket"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// TestWebsocketMessagesChecked: a websocket message is checked as an HTTP
// body is. Invalid UTF-8, or an escape of half a UTF-16 surrogate pair,
// fails the connection with status 1007 before anything runs, instead of
// reaching Redis as U+FFFD; a proper pair is a character like any other.
func TestWebsocketMessagesChecked(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "sock_utf8")
	prefix := s.Store.Keys().Prefix()
	init := `{"type":"connection_init","payload":{"Authorization":"Bearer ` + u.Token + `"}}`
	post := func(content string) string { // content as JSON string text, escapes as sent
		return `{"id":"1","type":"subscribe","payload":{"query":` + gatewaytest.Quote(engCreatePostDoc) + `,"variables":{"i":{"content":"` + content + `"}}}}`
	}
	tests := []struct {
		name     string
		messages []string // sent in order; the last is the one judged
		refused  bool
	}{
		{"invalid UTF-8 in an operation", []string{init, post("caf\xe9")}, true},
		{"a lone high surrogate", []string{init, post(`\ud83d alone`)}, true},
		{"a lone low surrogate", []string{init, post(`\ude00 alone`)}, true},
		{"invalid UTF-8 in connection_init", []string{"{\"type\":\"connection_init\",\"payload\":{\"x\":\"\xff\"}}"}, true},
		{"a surrogate pair", []string{init, post(`smile \ud83d\ude00`)}, false},
		{"too many values", []string{init, `{"id":"1","type":"subscribe","payload":{"query":` + gatewaytest.Quote(engCreatePostDoc) +
			`,"variables":{"i":{"content":"x","onlyTo":[` + strings.Repeat("1,", 6000) + `1]}}}}`}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			before := gatewaytest.RedisSnapshot(t, s.Redis, prefix)
			c, _, err := websocket.Dial(ctx, s.WSURL(), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			for i, m := range tt.messages {
				if err := c.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
					t.Fatal(err)
				}
				if i < len(tt.messages)-1 {
					if ack, err := gatewaytest.WSNext(ctx, c); err != nil || ack.Type != "connection_ack" {
						t.Fatalf("connection_init: %+v %v", ack, err)
					}
				}
			}
			m, err := gatewaytest.WSNext(ctx, c)
			if tt.refused {
				var ce websocket.CloseError
				want := websocket.StatusCode(1007)
				if tt.name == "too many values" {
					want = websocket.StatusMessageTooBig
				}
				if !errors.As(err, &ce) || ce.Code != want || ce.Reason == "" {
					t.Fatalf("got %+v, %v; want the connection closed with %d and a reason", m, err, want)
				}
				if diff := gatewaytest.DiffSnapshots(before, gatewaytest.RedisSnapshot(t, s.Redis, prefix)); len(diff) > 0 {
					t.Errorf("Redis changed: %v", diff)
				}
			} else {
				var r struct {
					Data   struct{ CreatePost struct{ ID string } }
					Errors []any
				}
				if err != nil || m.Type != "next" || json.Unmarshal(m.Payload, &r) != nil || r.Data.CreatePost.ID == "" || len(r.Errors) > 0 {
					t.Fatalf("got %+v %s, %v; want the post created", m, m.Payload, err)
				}
				got := s.MustDo(t, u.Token, `query($id: ID!) { post(id: $id) { content } }`, map[string]any{"id": r.Data.CreatePost.ID}).Str("post.content")
				if got != "smile 😀" {
					t.Errorf("stored %q", got)
				}
			}
			if me := s.Do(t, u.Token, authMeDoc, nil); me.Str("me.id") != u.ID {
				t.Errorf("the server stopped serving: %+v", me)
			}
		})
	}
}

// TestWebsocketProtocolErrorsCoded: the errors gqlgen writes for a
// message it cannot take (a payload that is not JSON, an unknown type)
// carry extensions.code, as every error of the API does, on both
// subprotocols.
func TestWebsocketProtocolErrorsCoded(t *testing.T) {
	s := gatewaytest.New(t)
	for _, proto := range subprotocols {
		t.Run(proto, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			c := wsOpenWith(ctx, t, s, proto, "")
			typ := "subscribe"
			if proto == "graphql-ws" {
				typ = "start"
			}
			if err := c.Write(ctx, websocket.MessageText, []byte(`{"id":"1","type":"`+typ+`","payload":"not an object"}`)); err != nil {
				t.Fatal(err)
			}
			m, err := gatewaytest.WSNext(ctx, c)
			if err != nil || m.Type != "error" || !strings.Contains(string(m.Payload), `"code":"BAD_USER_INPUT"`) {
				t.Fatalf("got %+v %s, %v; want an error with a code", m, m.Payload, err)
			}
		})
	}
}

// TestWebsocketDuplicateMembers: a websocket message that names a member
// twice (in the message, or in its payload's object) is refused as an
// HTTP body that does is, and nothing of it runs: gqlgen's decoding would
// keep the last, so what runs would not be what a reader of the first
// took it for. graphql-transport-ws closes with 4400 and a reason;
// legacy graphql-ws answers a start with an error for its id (then
// complete) and anything else with connection_error, and serves on.
func TestWebsocketDuplicateMembers(t *testing.T) {
	s := gatewaytest.New(t)
	u := s.Register(t, "sock_dup")
	prefix := s.Store.Keys().Prefix()
	mutation := gatewaytest.Quote(engCreatePostDoc) + `,"variables":{"i":{"content":"twice"}}`
	tests := []struct {
		name   string
		init   bool                      // the message judged is connection_init
		msg    func(start string) string // start: the type that starts an operation
		legacy string                    // graphql-ws's answer: error (for the id) or connection_error
	}{
		{"query twice in the payload", false, func(start string) string {
			return `{"id":"1","type":"` + start + `","payload":{"query":"{ me { id } }","query":` + mutation + `}}`
		}, "error"},
		{"query twice, spelt two ways", false, func(start string) string {
			return `{"id":"1","type":"` + start + `","payload":{"query":"{ me { id } }","QUERY":` + mutation + `}}`
		}, "error"},
		{"payload twice", false, func(start string) string {
			return `{"id":"1","type":"` + start + `","payload":{"query":"{ me { id } }"},"payload":{"query":` + mutation + `}}`
		}, "error"},
		{"a variable's member twice", false, func(start string) string {
			return `{"id":"1","type":"` + start + `","payload":{"query":` + gatewaytest.Quote(engCreatePostDoc) +
				`,"variables":{"i":{"content":"first","content":"second"}}}}`
		}, "error"},
		{"id twice", false, func(start string) string {
			return `{"id":"1","id":"2","type":"` + start + `","payload":{"query":` + mutation + `}}`
		}, "connection_error"},
		{"type twice", false, func(start string) string {
			return `{"id":"1","type":"` + start + `","Type":"` + start + `","payload":{"query":` + mutation + `}}`
		}, "connection_error"},
		{"a long name twice", false, func(start string) string {
			long := gatewaytest.Quote(strings.Repeat("é", 100))
			return `{"id":"1","type":"` + start + `","payload":{` + long + `:1,` + long + `:2,"query":` + mutation + `}}`
		}, "error"},
		{"Authorization twice in connection_init", true, func(string) string {
			return `{"type":"connection_init","payload":{"Authorization":"Bearer x","Authorization":"Bearer ` + u.Token + `"}}`
		}, "connection_error"},
	}
	for _, proto := range subprotocols {
		start := "subscribe"
		if proto == "graphql-ws" {
			start = "start"
		}
		for _, tt := range tests {
			t.Run(proto+"/"+tt.name, func(t *testing.T) {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				before := gatewaytest.RedisSnapshot(t, s.Redis, prefix)
				c, _, err := websocket.Dial(ctx, s.WSURL(), &websocket.DialOptions{Subprotocols: []string{proto}})
				if err != nil {
					t.Fatal(err)
				}
				defer c.CloseNow()
				init := gatewaytest.WSMessage{Type: "connection_init", Payload: []byte(`{"Authorization":"Bearer ` + u.Token + `"}`)}
				if !tt.init {
					gatewaytest.WSSend(ctx, t, c, init)
					if ack, err := gatewaytest.WSNext(ctx, c); err != nil || ack.Type != "connection_ack" {
						t.Fatalf("connection_init: %+v %v", ack, err)
					}
				}
				if err := c.Write(ctx, websocket.MessageText, []byte(tt.msg(start))); err != nil {
					t.Fatal(err)
				}
				m, err := gatewaytest.WSNext(ctx, c)
				if proto == "graphql-transport-ws" {
					var ce websocket.CloseError
					if !errors.As(err, &ce) || ce.Code != 4400 || !strings.Contains(ce.Reason, "appears twice") || !utf8.ValidString(ce.Reason) {
						t.Fatalf("got %+v %s, %v; want the connection closed with 4400 and a reason", m, m.Payload, err)
					}
				} else {
					if err != nil || m.Type != tt.legacy || !strings.Contains(string(m.Payload), "appears twice") ||
						!strings.Contains(string(m.Payload), `"code":"BAD_USER_INPUT"`) || (tt.legacy == "error") != (m.ID == "1") {
						t.Fatalf("got %+v %s, %v; want %s", m, m.Payload, err, tt.legacy)
					}
					if tt.legacy == "error" {
						if m, err := gatewaytest.WSNext(ctx, c); err != nil || m.Type != "complete" || m.ID != "1" {
							t.Fatalf("after the error: %+v %v; want complete", m, err)
						}
					}
				}
				if diff := gatewaytest.DiffSnapshots(before, gatewaytest.RedisSnapshot(t, s.Redis, prefix)); len(diff) > 0 {
					t.Errorf("Redis changed: %v", diff)
				}
				if proto == "graphql-ws" {
					// The connection serves on (after a proper
					// connection_init when the refused message was one).
					if tt.init {
						gatewaytest.WSSend(ctx, t, c, init)
						if ack, err := gatewaytest.WSNext(ctx, c); err != nil || ack.Type != "connection_ack" {
							t.Fatalf("connection_init: %+v %v", ack, err)
						}
					}
					if m, err := wsDo(ctx, t, c, "2", authMeDoc); err != nil || m.Type != "data" || !strings.Contains(string(m.Payload), u.ID) {
						t.Fatalf("the next operation: %+v %s, %v", m, m.Payload, err)
					}
				}
			})
		}
	}
}
