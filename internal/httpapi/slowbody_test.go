package httpapi_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/gqlguard"
)

// slowStart writes the start of a request whose body stalls: its
// headers, announcing a full-size body, then the first sent bytes.
type slowStart func(c net.Conn, host string, sent int)

// slowStarts are a JSON body and a multipart request's operations part
// (held in memory while its files are read).
func slowStarts(token string) map[string]slowStart {
	return map[string]slowStart{
		"json": func(c net.Conn, host string, sent int) {
			fmt.Fprintf(c, "POST /query HTTP/1.1\r\nHost: %s\r\nX-Slow: 1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"query\":\"%s",
				host, 64<<10, strings.Repeat(" ", sent-10))
		},
		"multipart": func(c net.Conn, host string, sent int) {
			head := "--b\r\nContent-Disposition: form-data; name=\"operations\"\r\n\r\n{\"query\":\""
			fmt.Fprintf(c, "POST /query HTTP/1.1\r\nHost: %s\r\nX-Slow: 1\r\nAuthorization: Bearer %s\r\nGraphQL-Require-Preflight: 1\r\n"+
				"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: %d\r\n\r\n%s%s", host, token, 64<<10, head, strings.Repeat(" ", sent-len(head)))
		},
	}
}

// dialFrom dials the test server from a loopback address of its own, so
// that the gateway tells the clients apart.
func dialFrom(ip string) *net.Dialer {
	return &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
}

// TestSlowBodiesFairShare: 64 slow bodies from one address, and 256 spread
// over four more, each announcing 64 KiB and sending 4 KiB before they
// stall, leave room for a sixth address: all of its POSTs are served.
// A body holds what it has sent, not what it announces, and an address at
// most an eighth of the budget (64 KiB of 512 KiB here): without either,
// eight of these bodies would fill it. The minimum rate is off, so that
// the bodies stay while the probes run.
func TestSlowBodiesFairShare(t *testing.T) {
	s := gatewaytest.New(t)
	token := s.Register(t, "slow").Token
	for kind, start := range slowStarts(token) {
		t.Run(kind, func(t *testing.T) { slowBodiesFairShare(t, s, start) })
	}
}

func slowBodiesFairShare(t *testing.T, s *gatewaytest.Server, start slowStart) {
	const sent = 4 << 10
	attackers := map[string]int{"127.0.0.1": 64, "127.0.0.2": 64, "127.0.0.3": 64, "127.0.0.4": 64, "127.0.0.5": 64}
	total := 0
	for _, n := range attackers {
		total += n
	}
	gw := s.NewQueryHandler(gateway.QueryOptions{MaxBodyBytes: 64 << 10, MaxBodyMemory: 512 << 10, Limits: gqlguard.DefaultLimits(20000)})
	// Each slow request is counted once the gateway has read what it sent
	// (its memory is then reserved, however it is reserved), or has
	// answered it.
	var counted atomic.Int64
	all := make(chan struct{})
	url := gatewaytest.Serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Slow") == "" {
			gw.ServeHTTP(w, r)
			return
		}
		var once sync.Once
		count := func() {
			once.Do(func() {
				if counted.Add(1) == int64(total) {
					close(all)
				}
			})
		}
		defer count()
		r.Body = &readCounter{ReadCloser: r.Body, after: sent, reached: count}
		gw.ServeHTTP(w, r)
	}))
	host := strings.TrimPrefix(url, "http://")
	for ip, n := range attackers {
		for range n {
			c, err := dialFrom(ip).Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { c.Close() })
			start(c, host, sent)
		}
	}
	select {
	case <-all:
	case <-time.After(30 * time.Second):
		t.Fatalf("%d of %d slow bodies read", counted.Load(), total)
	}
	client := &http.Client{Transport: &http.Transport{DialContext: dialFrom("127.0.0.6").DialContext}}
	defer client.CloseIdleConnections()
	for i := range 16 {
		res, err := client.Post(url+"/query", jsonType, strings.NewReader(`{"query":"{ __typename }"}`))
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"__typename":"Query"`) {
			t.Errorf("probe %d from another address: %d %s", i, res.StatusCode, body)
		}
	}
}

// readCounter calls reached once after bytes have been read.
type readCounter struct {
	io.ReadCloser
	after, got int
	reached    func()
}

func (r *readCounter) Read(p []byte) (int, error) {
	n, err := r.ReadCloser.Read(p)
	if r.got += n; r.got >= r.after {
		r.reached()
	}
	return n, err
}

// TestSlowBodyCut: a body slower than the minimum rate is cut with 408
// and BAD_USER_INPUT once a window has passed without its bytes, and its
// connection closed; a body that keeps the rate is served, however long
// it takes.
func TestSlowBodyCut(t *testing.T) {
	s := gatewaytest.New(t)
	token := s.Register(t, "slowcut").Token
	const window = 300 * time.Millisecond
	url := gatewaytest.Serve(t, s.NewQueryHandler(gateway.QueryOptions{MaxBodyBytes: 64 << 10, Limits: gqlguard.DefaultLimits(20000),
		MinBodyRate: 1000, BodyRateWindow: window})) // 300 bytes a window
	host := strings.TrimPrefix(url, "http://")
	for kind, start := range slowStarts(token) {
		t.Run(kind, func(t *testing.T) {
			c, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			began := time.Now()
			start(c, host, 400) // a window's worth, then nothing
			c.SetReadDeadline(time.Now().Add(10 * time.Second))
			res, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			if res.StatusCode != http.StatusRequestTimeout || !strings.Contains(string(body), `"BAD_USER_INPUT"`) ||
				!strings.Contains(string(body), "1000 bytes a second") || !res.Close {
				t.Errorf("%d close=%v %s; want 408 BAD_USER_INPUT naming the rate, and the connection closed", res.StatusCode, res.Close, body)
			}
			if took := time.Since(began); took > 5*time.Second {
				t.Errorf("cut after %s, want about %s", took, 2*window)
			}
		})
	}
	t.Run("at the rate", func(t *testing.T) {
		// 1 000 bytes a window, over a window and more.
		pr, pw := io.Pipe()
		go func() {
			tick := time.NewTicker(window / 10)
			defer tick.Stop()
			fmt.Fprint(pw, `{"query":"{ __typename }"`)
			for range 15 {
				<-tick.C
				fmt.Fprint(pw, strings.Repeat(" ", 100))
			}
			fmt.Fprint(pw, "}")
			pw.Close()
		}()
		req, _ := http.NewRequestWithContext(context.Background(), "POST", url+"/query", pr)
		req.Header.Set("Content-Type", jsonType)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if body, _ := io.ReadAll(res.Body); res.StatusCode != http.StatusOK || !strings.Contains(string(body), `"__typename":"Query"`) {
			t.Errorf("a body at the rate: %d %s", res.StatusCode, body)
		}
	})
}
