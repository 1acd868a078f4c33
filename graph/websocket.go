package graph

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"time"
	"unicode/utf8"

	"github.com/99designs/gqlgen/graphql/handler/transport"

	"github.com/socialgw/gateway/internal/social"
)

// checkedWebsocket accepts websockets through gqlgen's implementation and
// checks every message a client sends as limitBody checks an HTTP body:
// encoding/json would silently turn invalid UTF-8, or an escape of half a
// UTF-16 surrogate pair, into U+FFFD, and a post would be stored other
// than sent. Such a message fails the connection with close status 1007
// (RFC 6455: data inconsistent with the message's type) and a reason
// saying why, before gqlgen decodes it: nothing of it runs.
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
	s := socketFrom(r.Context())
	cc := deadlineConn{&checkedConn{WebsocketConn: c, sock: s}}
	if s != nil {
		s.setConn(cc)
	}
	if w.initTimeout > 0 {
		cc.init = time.AfterFunc(w.initTimeout, cc.initTimedOut)
	}
	return cc, nil
}

// checkedConn checks the messages of one websocket. It passes on the read
// limit and deadlines gqlgen sets (the optional interfaces of the
// connection it wraps).
type checkedConn struct {
	transport.WebsocketConn
	sock *socket     // nil outside the gateway's handler
	init *time.Timer // until a first message is handed to gqlgen
}

// graphqlTransportWS is the subprotocol of the graphql-ws library (the
// other, legacy "graphql-ws", is subscriptions-transport-ws's).
const graphqlTransportWS = "graphql-transport-ws"

// Close codes: RFC 6455's, and graphql-transport-ws's for a
// connection_init that did not come in time.
const (
	closeProtocolError  = 1002
	closeInvalidPayload = 1007 // data not consistent with its type (invalid UTF-8 in a text message)
	closeMessageTooBig  = 1009
	closeInitTimeout    = 4408
)

func (c *checkedConn) NextReader() (int, io.Reader, error) {
	// No message is read while the connection's operations fill their
	// places: TCP holds the client back (socket.reserve).
	if c.sock != nil && !c.sock.reserve() {
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
	if c.init != nil {
		c.init.Stop()
	}
	return typ, bytes.NewReader(b), nil
}

// initTimedOut closes a connection that sent no connection_init in time:
// with 4408, as graphql-transport-ws says; legacy graphql-ws names no
// code, and keeps gqlgen's 1002.
func (c *checkedConn) initTimedOut() {
	code, reason := closeInitTimeout, "Connection initialisation timeout"
	if c.Subprotocol() != graphqlTransportWS {
		code, reason = closeProtocolError, "connection initialisation timeout"
	}
	if c.sock != nil {
		c.sock.close(code, reason)
		return
	}
	_ = c.WebsocketConn.WriteClose(code, reason)
	_ = c.WebsocketConn.Close()
}

// Close also stops the connection_init timer of a connection that ends
// before it fires.
func (c *checkedConn) Close() error {
	if c.init != nil {
		c.init.Stop()
	}
	return c.WebsocketConn.Close()
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

// withCodes gives the errors of a websocket protocol message (error,
// connection_error) an extensions.code, as every error of this API has:
// gqlgen writes its own protocol errors ("invalid json", an unknown
// message) with a message only. They are the client's: BAD_USER_INPUT.
// Other messages pass untouched, without being encoded twice.
func withCodes(v any) any {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	if rv.Kind() != reflect.Struct {
		return v
	}
	if t := rv.FieldByName("Type"); !t.IsValid() || t.Kind() != reflect.String ||
		(t.String() != "error" && t.String() != "connection_error") {
		return v
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) != nil || len(m["payload"]) == 0 {
		return v
	}
	var list []map[string]any
	var one map[string]any
	switch {
	case json.Unmarshal(m["payload"], &list) == nil:
		for _, e := range list {
			addCode(e)
		}
		m["payload"], _ = json.Marshal(list)
	case json.Unmarshal(m["payload"], &one) == nil:
		addCode(one)
		m["payload"], _ = json.Marshal(one)
	default:
		return v
	}
	out, err := json.Marshal(m)
	if err != nil {
		return v
	}
	return json.RawMessage(out)
}

func addCode(e map[string]any) {
	ext, _ := e["extensions"].(map[string]any)
	if ext == nil {
		ext = map[string]any{}
		e["extensions"] = ext
	}
	if _, ok := ext["code"]; !ok {
		ext["code"] = string(social.BadUserInput)
	}
}
