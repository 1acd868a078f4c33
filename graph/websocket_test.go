package graph_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

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
		return `{"id":"1","type":"subscribe","payload":{"query":` + quote(engCreatePostDoc) + `,"variables":{"i":{"content":"` + content + `"}}}}`
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
		{"too many values", []string{init, `{"id":"1","type":"subscribe","payload":{"query":` + quote(engCreatePostDoc) +
			`,"variables":{"i":{"content":"x","onlyTo":[` + strings.Repeat("1,", 6000) + `1]}}}}`}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			before := redisSnapshot(t, s.Redis, prefix)
			c, _, err := websocket.Dial(ctx, wsURL(s), &websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
			if err != nil {
				t.Fatal(err)
			}
			defer c.CloseNow()
			for i, m := range tt.messages {
				if err := c.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
					t.Fatal(err)
				}
				if i < len(tt.messages)-1 {
					if ack, err := wsNext(ctx, c); err != nil || ack.Type != "connection_ack" {
						t.Fatalf("connection_init: %+v %v", ack, err)
					}
				}
			}
			m, err := wsNext(ctx, c)
			if tt.refused {
				var ce websocket.CloseError
				want := websocket.StatusCode(1007)
				if tt.name == "too many values" {
					want = websocket.StatusMessageTooBig
				}
				if !errors.As(err, &ce) || ce.Code != want || ce.Reason == "" {
					t.Fatalf("got %+v, %v; want the connection closed with %d and a reason", m, err, want)
				}
				if diff := diffSnapshots(before, redisSnapshot(t, s.Redis, prefix)); len(diff) > 0 {
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
			m, err := wsNext(ctx, c)
			if err != nil || m.Type != "error" || !strings.Contains(string(m.Payload), `"code":"BAD_USER_INPUT"`) {
				t.Fatalf("got %+v %s, %v; want an error with a code", m, m.Payload, err)
			}
		})
	}
}
