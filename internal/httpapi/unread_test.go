package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// TestUnreadSocketBesideHeavyProbe: one anonymous websocket from
// 127.0.0.2 (each subprotocol in turn, then eight sockets) sends heavy operations (8 aliased 100-post pages, costly and
// heavy) and never reads, reconnecting whenever it is closed; meanwhile
// a client at 127.0.0.3 posts a heavy query (5 aliased pages) every
// 100 ms. Its probes are refused at most as often as without the
// attacker, plus 5 %: an operation gives its slots back once it has
// executed, not once its answer is read, and its client has its fair
// turn of the costly and heavy lanes. The production limits on a
// process of 2 cores (one costly slot), except the queue wait: 2 s
// rather than 500 ms, because a probe with its fair turn still waits
// for the operation ahead of it, which takes over 500 ms when other
// test packages share the cores. A client that starved it would be
// refused in every probe, whatever the wait.
func TestUnreadSocketBesideHeavyProbe(t *testing.T) {
	redistest.Slow(t, "probes for 8 s alone and beside each of three attacks")
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(2))
	s := gatewaytest.New(t)
	url := gatewaytest.Serve(t, s.NewQueryHandler(gateway.QueryOptions{Limits: gqlguard.DefaultLimits(20000),
		MaxBodyBytes: 1 << 20, MaxConcurrent: 32, QueueWait: 2 * time.Second, RequestTimeout: 10 * time.Second}))
	author := s.Register(t, "author")
	ctx := context.Background()
	for i := range 100 {
		content := strconv.Itoa(i) + strings.Repeat(" a post of the longest kind", 18)
		if _, err := s.Store.CreatePost(ctx, author.ID, social.NewPost{Content: content[:min(len(content), 500)]}); err != nil {
			t.Fatal(err)
		}
	}
	pages := func(n int) string {
		var b strings.Builder
		b.WriteString("{")
		for i := range n {
			fmt.Fprintf(&b, " a%d: userTimeline(userId: %q, first: 100) { edges { node { id content createdAt author { id name } likesCount commentsCount } } }", i, author.ID)
		}
		b.WriteString(" }")
		return b.String()
	}
	attack, probeDoc := pages(8), pages(5)

	prober := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3)}}).DialContext}}
	probes := func(n int) (refused int) {
		body, _ := json.Marshal(map[string]string{"query": probeDoc})
		for range n {
			res, err := prober.Post(url+"/query", "application/json", bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			switch {
			case res.StatusCode == http.StatusServiceUnavailable:
				refused++
			case res.StatusCode != http.StatusOK || bytes.Contains(b, []byte(`"errors"`)):
				t.Fatalf("probe: %d %.300s", res.StatusCode, b)
			}
			time.Sleep(100 * time.Millisecond)
		}
		return refused
	}
	const n = 40
	alone := probes(n)

	for _, a := range []struct {
		proto   string
		sockets int
	}{{"graphql-transport-ws", 1}, {"graphql-ws", 1}, {"graphql-transport-ws", 8}} {
		actx, stop := context.WithCancel(ctx)
		var wg sync.WaitGroup
		var sent, conns atomic.Int64
		for range a.sockets {
			wg.Go(func() {
				s, c := unreadAttacker(actx, t, url, a.proto, attack)
				sent.Add(int64(s))
				conns.Add(int64(c))
			})
		}
		time.Sleep(2 * time.Second) // their first answers fill the sockets' buffers
		during := probes(n)
		stop()
		wg.Wait()
		t.Logf("%d %s socket(s): heavy probes refused: %d of %d alone, %d of %d beside them (%d operations sent over %d connections)",
			a.sockets, a.proto, alone, n, during, n, sent.Load(), conns.Load())
		if float64(during-alone)/n > 0.05 {
			t.Errorf("beside %d unread %s socket(s) %d of %d heavy probes were refused, %d alone", a.sockets, a.proto, during, n, alone)
		}
	}
}

// unreadAttacker connects from 127.0.0.2 with a small receive buffer
// over the subprotocol proto, sends doc without end and reads nothing past connection_ack,
// reconnecting when the server closes the connection, until ctx ends.
// It returns the operations it sent and the connections it opened.
func unreadAttacker(ctx context.Context, t *testing.T, url, proto, doc string) (sent, conns int) {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, 2)}, Control: func(_, _ string, c syscall.RawConn) error {
		var err error
		_ = c.Control(func(fd uintptr) { err = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		return err
	}}
	client := &http.Client{Transport: &http.Transport{DialContext: d.DialContext}}
	typ := map[string]string{"graphql-transport-ws": "subscribe", "graphql-ws": "start"}[proto]
	msg := func(i int) []byte {
		payload, _ := json.Marshal(map[string]string{"query": doc})
		return []byte(`{"id":"` + strconv.Itoa(i) + `","type":"` + typ + `","payload":` + string(payload) + `}`)
	}
	for ctx.Err() == nil {
		c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/query", &websocket.DialOptions{
			Subprotocols: []string{proto}, HTTPClient: client})
		if err != nil {
			if ctx.Err() == nil {
				t.Errorf("dial: %v", err)
			}
			return sent, conns
		}
		conns++
		gatewaytest.WSSend(ctx, t, c, gatewaytest.WSMessage{Type: "connection_init"})
		if m, err := gatewaytest.WSNext(ctx, c); err != nil || m.Type != "connection_ack" {
			c.CloseNow()
			if ctx.Err() == nil {
				t.Errorf("init: %+v %v", m, err)
			}
			return sent, conns
		}
		// Held back by TCP once the server reads no further; failed once
		// the server closed the connection.
		for i := 0; c.Write(ctx, websocket.MessageText, msg(i)) == nil; i++ {
			sent++
		}
		c.CloseNow()
	}
	return sent, conns
}
