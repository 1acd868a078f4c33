package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"time"

	"github.com/99designs/gqlgen/graphql/handler/transport"
	coderws "github.com/coder/websocket"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gqlerr"
	"github.com/socialgw/gateway/internal/operation"
	"github.com/socialgw/gateway/internal/social"
)

// websocketTransport is gqlgen's websocket transport (both subprotocols)
// as the gateway runs it.
func websocketTransport(l SocketLimits, authn auth.Authenticator) transport.Websocket {
	ping := cmp.Or(l.Ping, 15*time.Second)
	return transport.Websocket{
		// Pings on both subprotocols; on graphql-transport-ws a peer
		// that does not answer one within two intervals is closed.
		KeepAlivePingInterval: ping,
		PingPongInterval:      ping,
		// upgrades has already accepted the origin: same-origin, or one
		// of CORS_ORIGINS (against cross-site websocket hijacking).
		// Messages are checked as HTTP bodies are (wsconn.go). A client
		// that never sends connection_init would hold its connection and
		// goroutines for ever: checkedWebsocket closes it (not gqlgen's
		// InitTimeout, whose close code is the wrong one).
		Implementation: checkedWebsocket{
			WebsocketImplementation: transport.CoderWebsocketImplementation{
				AcceptOptions: coderws.AcceptOptions{InsecureSkipVerify: true},
			},
			initTimeout: cmp.Or(l.Init, 10*time.Second),
		},
		InitFunc: func(ctx context.Context, p transport.InitPayload) (context.Context, *transport.InitPayload, error) {
			// How a subscription ends with an error depends on the
			// transport (internal/gqlerr/stream.go).
			ctx = gqlerr.WithWebsocket(ctx)
			// A token in connection_init wins over the upgrade request's
			// header, which authenticate already checked.
			if h := p.Authorization(); h != "" {
				vctx, err := auth.ViewerFromHeader(ctx, authn, h)
				if err != nil {
					return refuseSocket(ctx, err)
				}
				if s := operation.ConnFrom(ctx); s != nil {
					s.SetToken(bearer(h)) // checked again by the gate for each operation
				}
				return vctx, nil, nil
			}
			return ctx, nil, nil
		},
	}
}

// refuseSocket ends a websocket whose connection_init carried a bad token:
// closed with 4403 (graphql-transport-ws's "Forbidden"), or 4500 with the
// error logged and masked when authentication itself failed.
func refuseSocket(ctx context.Context, err error) (context.Context, *transport.InitPayload, error) {
	code, msg := 4403, social.ErrorMessage(err)
	if social.ErrorCode(err) == social.Internal {
		gqlerr.Present(ctx, err) // logs it
		code = 4500
	}
	ctx = transport.AppendCloseReason(transport.WithWebsocketCloseCode(ctx, code), msg)
	return ctx, nil, errors.New(msg)
}

// socketWriteTimeout is how long a message may take to reach a client
// that is not reading before the connection is closed.
const socketWriteTimeout = 10 * time.Second

// deadlineConn gives each write a deadline: a client that stops reading
// is disconnected rather than holding the answers written to it.
type deadlineConn struct {
	*checkedConn
}

func (c deadlineConn) WriteJSON(v any) error {
	t := time.AfterFunc(socketWriteTimeout, func() {
		if c.sock != nil {
			c.sock.Close(operation.CloseTryAgain, "a message was not read within 10 s")
		}
		_ = c.checkedConn.Close()
	})
	defer t.Stop()
	return c.checkedConn.WriteJSON(withCodes(v))
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
