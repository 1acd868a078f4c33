package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/socialgw/gateway/graph"
)

// The load generator of the HTTP targets: a minimal HTTP/1.1 client, as
// the replay's client is for Redis. The gateway's pages/s at saturation is
// judged against Redis alone, and the client shares the machine's two
// cores with both: net/http's client (a goroutine pair per connection,
// header maps, a request object per page) took about 7 % of the CPU of a
// saturated gateway run, CPU a real deployment spends on other machines.
// Here each reader's request is built once, written in one write on a
// kept-alive connection, and the response is read by its Content-Length,
// unparsed beyond the status line and headers.

// rawHTTPTarget posts the reference query to path on addr as the reader.
// It holds at most conc connections, opened as needed.
func rawHTTPTarget(name, addr, path string, conc int) (target, func()) {
	body, _ := json.Marshal(map[string]string{"query": graph.ReferenceQuery})
	var requests sync.Map // reader id → request bytes
	request := func(r reader) []byte {
		if b, ok := requests.Load(r.id); ok {
			return b.([]byte)
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n",
			path, addr, r.token, len(body))
		b.Write(body)
		requests.Store(r.id, b.Bytes())
		return b.Bytes()
	}
	pool := make(chan *httpConn, conc)
	t := target{name: name, page: func(ctx context.Context, r reader) (int, error) {
		var c *httpConn
		select {
		case c = <-pool:
		default:
			conn, err := (&net.Dialer{Timeout: 5 * time.Second}).DialContext(ctx, "tcp", addr)
			if err != nil {
				return 0, err
			}
			c = &httpConn{conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}
		}
		resp, keep, err := c.roundTrip(request(r))
		defer func() {
			if err == nil && keep {
				select {
				case pool <- c:
					return
				default: // more connections than the pool keeps
				}
			}
			_ = c.conn.Close()
		}()
		if err != nil {
			return 0, err
		}
		if bytes.Contains(resp, []byte(`"errors"`)) {
			return 0, fmt.Errorf("%s%s: %.300s", addr, path, resp)
		}
		// Counting the cursors counts the edges without decoding.
		return bytes.Count(resp, []byte(`"cursor"`)), nil
	}}
	return t, closePool(pool)
}

// httpConn is one kept-alive HTTP/1.1 connection.
type httpConn struct {
	conn net.Conn
	r    *bufio.Reader
	body []byte
}

func (c *httpConn) Close() error { return c.conn.Close() }

// roundTrip writes a request and reads its response: the body (valid
// until the next round trip) and whether the connection may be kept. A
// status other than 200 is an error.
func (c *httpConn) roundTrip(req []byte) ([]byte, bool, error) {
	if _, err := c.conn.Write(req); err != nil {
		return nil, false, err
	}
	status, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, false, err
	}
	ok := bytes.HasPrefix(status, []byte("HTTP/1.1 200 "))
	length, keep := -1, true
	for {
		line, err := c.r.ReadSlice('\n')
		if err != nil {
			return nil, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.Atoi(string(value)); err != nil {
				return nil, false, fmt.Errorf("bad Content-Length %q", value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			return nil, false, fmt.Errorf("a response without Content-Length (Transfer-Encoding %s)", value)
		case bytes.EqualFold(name, []byte("Connection")) && bytes.EqualFold(value, []byte("close")):
			keep = false
		}
	}
	if length < 0 {
		return nil, false, fmt.Errorf("a response without Content-Length: %q", bytes.TrimSpace(status))
	}
	if cap(c.body) < length {
		c.body = make([]byte, length)
	}
	c.body = c.body[:length]
	if _, err := io.ReadFull(c.r, c.body); err != nil {
		return nil, false, err
	}
	if !ok {
		return nil, keep, fmt.Errorf("status %q: %.300s", bytes.TrimSpace(status), c.body)
	}
	return c.body, keep, nil
}
