package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/socialgw/gateway/internal/operation"
	"github.com/socialgw/gateway/internal/social"
)

// checkedWebsocket accepts websockets through gqlgen's implementation and
// checks every message a client sends as an HTTP body is checked (post.go):
// encoding/json would silently turn invalid UTF-8, or an escape of half a
// UTF-16 surrogate pair, into U+FFFD, and a post would be stored other
// than sent. Such a message fails the connection with close status 1007
// (RFC 6455: data inconsistent with the message's type) and a reason
// saying why, before gqlgen decodes it: nothing of it runs. A message
// that names a member twice is refused too (duplicateIn).
//
// It also closes a connection that sends no connection_init within
// initTimeout, with the code its subprotocol gives that (initTimedOut):
// gqlgen's own InitTimeout closes with 1002 whatever the subprotocol.
type checkedWebsocket struct {
	transport.WebsocketImplementation
	initTimeout time.Duration // 0: none
}

func (w checkedWebsocket) Accept(rw http.ResponseWriter, r *http.Request, o transport.WebsocketAcceptOptions) (transport.WebsocketConn, error) {
	c, err := w.WebsocketImplementation.Accept(rw, r, o)
	if err != nil {
		return nil, err
	}
	s := operation.ConnFrom(r.Context())
	cc := deadlineConn{&checkedConn{WebsocketConn: c, sock: s}}
	if s != nil {
		s.Accepted(func(code int, reason string) {
			_ = cc.WriteClose(code, reason)
			_ = cc.Close()
		})
	}
	if w.initTimeout > 0 {
		// Stored atomically: with a short timeout the timer may fire, and
		// its Close read the field, before this assignment returns.
		cc.init.Store(time.AfterFunc(w.initTimeout, cc.initTimedOut))
	}
	return cc, nil
}

// checkedConn checks the messages of one websocket. It passes on the read
// limit and deadlines gqlgen sets (the optional interfaces of the
// connection it wraps).
type checkedConn struct {
	transport.WebsocketConn
	sock *operation.Conn            // nil outside the gateway's handler
	init atomic.Pointer[time.Timer] // until a first message is handed to gqlgen
}

// graphqlTransportWS is the subprotocol of the graphql-ws library (the
// other, legacy "graphql-ws", is subscriptions-transport-ws's).
const graphqlTransportWS = "graphql-transport-ws"

// Close codes: RFC 6455's, and graphql-transport-ws's for a message it
// cannot take and for a connection_init that did not come in time.
const (
	closeProtocolError  = 1002
	closeInvalidPayload = 1007 // data not consistent with its type (invalid UTF-8 in a text message)
	closeMessageTooBig  = 1009
	closeBadRequest     = 4400
	closeInitTimeout    = 4408
)

func (c *checkedConn) NextReader() (int, io.Reader, error) {
	for {
		// No message is read while the connection's operations fill their
		// places: TCP holds the client back (operation.Conn.Reserve).
		if c.sock != nil && !c.sock.Reserve() {
			return 0, nil, transport.ErrWebsocketClosed
		}
		typ, r, err := c.WebsocketConn.NextReader()
		if err != nil {
			return typ, r, err
		}
		b, err := io.ReadAll(r)
		if err != nil {
			return typ, nil, err
		}
		reason, code := "", closeInvalidPayload
		switch {
		case checkValues(b) != nil:
			// The variables' bound, counted on the message's text as on an
			// HTTP body's, before gqlgen decodes them.
			reason, code = "the message holds too many values", closeMessageTooBig
		case !utf8.Valid(b):
			reason = "the message is not valid UTF-8"
		case loneSurrogate(b):
			// A close reason fits in 123 bytes: loneSurrogateMessage does not.
			reason = `the message escapes half of a UTF-16 surrogate pair (\uD800-\uDFFF alone)`
		}
		if reason != "" {
			_ = c.WebsocketConn.WriteClose(code, reason)
			return typ, nil, transport.ErrWebsocketClosed
		}
		if dup, id, msgType := duplicateIn(b); dup != "" {
			if c.Subprotocol() == graphqlTransportWS {
				// The protocol's answer to a message it cannot take.
				_ = c.WebsocketConn.WriteClose(closeBadRequest, closeReason(dup.inMessage()))
				return typ, nil, transport.ErrWebsocketClosed
			}
			c.refuseLegacy(dup, id, msgType)
			continue
		}
		if t := c.init.Load(); t != nil {
			t.Stop()
		}
		return typ, bytes.NewReader(b), nil
	}
}

// duplicateIn reports the first member a websocket message, or the object
// of its payload, names twice, as an HTTP body's are (decodeBody):
// gqlgen's decoding keeps the last, so a subscribe whose payload names
// "query" twice would run what a proxy reading the first took for
// something else, and an "id" or "type" named twice answers or acts on
// another operation than the first says. It also returns the message's
// id and type when each is named once ("" otherwise).
func duplicateIn(b []byte) (dup duplicateMember, id, typ string) {
	m, d, err := objectMembers(b, []string{"id", "type", "payload"})
	if err != nil {
		return "", "", "" // not JSON: gqlgen answers it
	}
	if d != "id" {
		_ = json.Unmarshal(m["id"], &id)
	}
	if d != "type" {
		_ = json.Unmarshal(m["type"], &typ)
	}
	if d == "" {
		// An operation's payload holds its parameters, connection_init's
		// its credentials.
		_, d, _ = objectMembers(m["payload"], paramNames)
	}
	if d == "" {
		// Anywhere deeper: the variables' objects.
		return repeatedName(b), id, typ
	}
	return duplicateMember(d), id, typ
}

// refuseLegacy answers a legacy graphql-ws message that names a member
// twice, and nothing of it runs: a start with one id gets an error for
// that id, then complete, as gqlgen answers a start it cannot decode;
// any other message a connection_error (its id, if any, may name an
// operation that is running). The connection stays open: the protocol
// closes only for what breaks it.
func (c *checkedConn) refuseLegacy(dup duplicateMember, id, typ string) {
	e := &gqlerror.Error{Message: dup.inMessage(), Extensions: map[string]any{"code": string(social.BadUserInput)}}
	if typ == "start" && id != "" {
		list, _ := json.Marshal([]*gqlerror.Error{e})
		if c.reply(legacyMessage{ID: id, Type: "error", Payload: list}) == nil {
			_ = c.reply(legacyMessage{ID: id, Type: "complete"})
		}
		return
	}
	one, _ := json.Marshal(e)
	_ = c.reply(legacyMessage{Type: "connection_error", Payload: one})
}

// legacyMessage is a message of the legacy graphql-ws protocol.
type legacyMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// reply writes a message the connection answers itself, under the write
// deadline of gqlgen's (deadlineConn).
func (c *checkedConn) reply(v any) error { return deadlineConn{c}.WriteJSON(v) }

// initTimedOut closes a connection that sent no connection_init in time:
// with 4408, as graphql-transport-ws says; legacy graphql-ws names no
// code, and keeps gqlgen's 1002.
func (c *checkedConn) initTimedOut() {
	code, reason := closeInitTimeout, "Connection initialisation timeout"
	if c.Subprotocol() != graphqlTransportWS {
		code, reason = closeProtocolError, "connection initialisation timeout"
	}
	if c.sock != nil {
		c.sock.Close(code, reason)
		return
	}
	_ = c.WebsocketConn.WriteClose(code, reason)
	_ = c.WebsocketConn.Close()
}

// Close also stops the connection_init timer of a connection that ends
// before it fires.
func (c *checkedConn) Close() error {
	if t := c.init.Load(); t != nil {
		t.Stop()
	}
	return c.WebsocketConn.Close()
}

// closeReason cuts a close frame's reason to the 123 bytes it may hold.
func closeReason(s string) string { return cut(s, 123) }

// cut returns s cut to at most n bytes, at a character's start.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

func (c *checkedConn) SetReadLimit(n int64) {
	if l, ok := c.WebsocketConn.(transport.WebsocketReadLimiter); ok {
		l.SetReadLimit(n)
	}
}

func (c *checkedConn) SetReadDeadline(t time.Time) error {
	if d, ok := c.WebsocketConn.(transport.WebsocketReadDeadliner); ok {
		return d.SetReadDeadline(t)
	}
	return nil
}
