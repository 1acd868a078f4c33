package graph_test

import (
	"context"
	"io"
	"net/http"
	"testing"

	"github.com/coder/websocket"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/social"
)

// The test client's raw requests and websocket messages, under the
// names this package's tests use.

func httpDo(t *testing.T, s *gatewaytest.Server, method, path string, header map[string]string, body io.Reader) (int, http.Header, []byte) {
	t.Helper()
	return s.Raw(t, method, path, header, body)
}

func decodeGraphQL(t *testing.T, status int, body []byte) *gatewaytest.Response {
	t.Helper()
	return gatewaytest.Decode(t, status, body)
}

func quote(s string) string { return gatewaytest.Quote(s) }

func mustUser(t *testing.T, s *gatewaytest.Server, id string) *social.User {
	t.Helper()
	return s.MustUser(t, id)
}

const jsonType = "application/json"

type wsMessage = gatewaytest.WSMessage

func wsURL(s *gatewaytest.Server) string { return s.WSURL() }

func wsSend(ctx context.Context, t *testing.T, c *websocket.Conn, m wsMessage) {
	t.Helper()
	gatewaytest.WSSend(ctx, t, c, m)
}

func wsNext(ctx context.Context, c *websocket.Conn) (wsMessage, error) {
	return gatewaytest.WSNext(ctx, c)
}
