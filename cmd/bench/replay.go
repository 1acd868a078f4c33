package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/graph"
)

// The replay baseline: how many reference pages per second Redis alone
// serves. The gateway's own Redis traffic for each reader's page is
// recorded once (every flight, that is every Process or ProcessPipeline
// call, one round trip each, with its commands' arguments) and then sent
// again, flight after flight, by a minimal client with no GraphQL, no HTTP
// and no decoding: the gateway at saturation is judged against that client
// at saturation.
//
// Replaying is safe and repeats the same work: the flights of a reference
// page are reads, except the home-page script's HSET of the reader's
// activity mark, which it writes only when the mark is older than the
// recorded "now" by the activity period; the mark was already written
// while recording (or later, by the gateway), so a replay writes nothing
// and reads what the gateway read. The token check (the session's
// revocation) is a read.

// recordKey marks a context whose flights are recorded.
type recordKey struct{}

// flightRecorder is a go-redis hook recording the flights of the requests
// whose context carries a *recording; others pass through at the cost of
// a context lookup.
type flightRecorder struct{}

func (flightRecorder) DialHook(next redis.DialHook) redis.DialHook { return next }

func (flightRecorder) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		rec, _ := ctx.Value(recordKey{}).(*recording)
		if rec == nil {
			return next(ctx, cmd)
		}
		defer rec.start([]redis.Cmder{cmd})()
		return next(ctx, cmd)
	}
}

func (flightRecorder) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		rec, _ := ctx.Value(recordKey{}).(*recording)
		if rec == nil {
			return next(ctx, cmds)
		}
		defer rec.start(cmds)()
		return next(ctx, cmds)
	}
}

// recording holds the flights of one request, in the order they started.
type recording struct {
	mu       sync.Mutex
	flights  []flight
	inFlight int
	overlaps int // flights started while another one of the request was in flight
	err      error
}

// flight is one round trip as the gateway sent it.
type flight struct {
	wire []byte  // the commands in RESP, as go-redis writes them
	args [][]any // the commands' arguments, for the go-redis replay
}

// connSetup names the commands go-redis sends on a new connection (they
// pass the hooks too); they are not the page's.
var connSetup = map[string]bool{"hello": true, "auth": true, "select": true, "client": true}

// start records a flight and returns the function that marks its end.
func (r *recording) start(cmds []redis.Cmder) func() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(cmds) > 0 && connSetup[strings.ToLower(cmds[0].Name())] {
		return func() {}
	}
	if r.inFlight > 0 {
		r.overlaps++
	}
	r.inFlight++
	var f flight
	for _, c := range cmds {
		args := append([]any(nil), c.Args()...)
		w, err := appendCommand(f.wire, args)
		if err != nil && r.err == nil {
			r.err = err
		}
		f.wire = w
		f.args = append(f.args, args)
	}
	r.flights = append(r.flights, f)
	return func() {
		r.mu.Lock()
		r.inFlight--
		r.mu.Unlock()
	}
}

// appendCommand appends a command in RESP: an array of bulk strings,
// each argument formatted as go-redis formats it (internal/proto.Writer).
func appendCommand(b []byte, args []any) ([]byte, error) {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(len(args)), 10)
	b = append(b, '\r', '\n')
	var num []byte
	for _, a := range args {
		var s []byte
		switch v := a.(type) {
		case nil:
		case string:
			s = []byte(v)
		case []byte:
			s = v
		case bool:
			s = []byte("0")
			if v {
				s = []byte("1")
			}
		case float32:
			s = strconv.AppendFloat(num[:0], float64(v), 'f', -1, 64)
		case float64:
			s = strconv.AppendFloat(num[:0], v, 'f', -1, 64)
		case time.Duration:
			s = strconv.AppendInt(num[:0], v.Nanoseconds(), 10)
		case time.Time:
			s = v.AppendFormat(num[:0], time.RFC3339Nano)
		case encoding.BinaryMarshaler:
			m, err := v.MarshalBinary()
			if err != nil {
				return b, err
			}
			s = m
		default:
			switch rv := reflect.ValueOf(a); rv.Kind() {
			case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
				s = strconv.AppendInt(num[:0], rv.Int(), 10)
			case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
				s = strconv.AppendUint(num[:0], rv.Uint(), 10)
			default:
				return b, fmt.Errorf("replay: cannot encode an argument of type %T", a)
			}
		}
		b = append(b, '$')
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(b, '\r', '\n')
		b = append(b, s...)
		b = append(b, '\r', '\n')
	}
	return b, nil
}

// recordedPage is the flights of one reader's reference page.
type recordedPage struct {
	flights []flight
	posts   int
}

// Recorded are the recorded pages, by reader.
type Recorded struct {
	pages    map[string]*recordedPage
	Pages    int
	Flights  float64 // per page
	Commands float64 // per page
	Overlaps int     // flights that overlapped another of their page, over all pages
	Took     time.Duration
}

// recordPages records the flights of every reader's reference page, served
// by the gateway's /query handler in process (the recording follows the
// request's context, which an HTTP round trip would not carry), one page
// at a time.
func (b *Bench) recordPages(ctx context.Context, rs []reader) (*Recorded, error) {
	start := time.Now()
	body, _ := json.Marshal(map[string]string{"query": graph.ReferenceQuery})
	out := &Recorded{pages: map[string]*recordedPage{}}
	var cmds, flights int
	for _, r := range rs {
		rec := &recording{}
		req := httptest.NewRequestWithContext(context.WithValue(ctx, recordKey{}, rec), http.MethodPost, "/query", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+r.token)
		w := httptest.NewRecorder()
		b.gw.Query.ServeHTTP(w, req)
		resp := w.Body.Bytes()
		if w.Code != http.StatusOK || bytes.Contains(resp, []byte(`"errors"`)) {
			return nil, fmt.Errorf("recording %s's page: status %d: %.300s", r.id, w.Code, resp)
		}
		if rec.err != nil {
			return nil, rec.err
		}
		if len(rec.flights) == 0 {
			return nil, fmt.Errorf("recording %s's page: no flight recorded", r.id)
		}
		out.pages[r.id] = &recordedPage{flights: rec.flights, posts: bytes.Count(resp, []byte(`"cursor"`))}
		out.Overlaps += rec.overlaps
		flights += len(rec.flights)
		for _, f := range rec.flights {
			cmds += len(f.args)
		}
	}
	out.Pages = len(out.pages)
	out.Flights, out.Commands = float64(flights)/float64(out.Pages), float64(cmds)/float64(out.Pages)
	out.Took = time.Since(start)
	return out, nil
}

// page returns the recorded page of a reader.
func (rc *Recorded) page(r reader) (*recordedPage, error) {
	p := rc.pages[r.id]
	if p == nil {
		return nil, fmt.Errorf("replay: no recorded page for reader %s", r.id)
	}
	return p, nil
}

// rawReplayTarget replays the recorded flights over plain connections:
// each flight's commands are written in one write, as go-redis pipelines
// them, and their replies read and skipped, unparsed beyond their
// framing. This is the least work a client can do per page, so it is
// what Redis alone serves on this machine (the client shares the cores
// with Redis, as the gateway does). It holds as many connections as
// go-redis's pool (PoolSize), spoken in the same protocol (RESP2 or 3).
func rawReplayTarget(ctx context.Context, rdb *redis.Client, rc *Recorded, conc int) (target, func(), error) {
	opt := rdb.Options()
	n := min(opt.PoolSize, conc)
	pool := make(chan *rawConn, n)
	closeAll := closePool(pool)
	for range n {
		c, err := dialRaw(ctx, opt)
		if err != nil {
			closeAll()
			return target{}, nil, err
		}
		pool <- c
	}
	t := target{name: "replay", note: fmt.Sprintf("%d connections", n), page: func(ctx context.Context, r reader) (int, error) {
		p, err := rc.page(r)
		if err != nil {
			return 0, err
		}
		var c *rawConn
		select {
		case c = <-pool:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		defer func() { pool <- c }()
		for _, f := range p.flights {
			if err := c.roundTrip(f.wire, len(f.args)); err != nil {
				return 0, err
			}
		}
		return p.posts, nil
	}}
	return t, closeAll, nil
}

// goRedisReplayTarget replays the recorded flights through a go-redis
// client (the bench's own, with its pool): what go-redis itself adds to
// Redis alone, encoding and decoding every reply into its Cmd values.
func goRedisReplayTarget(rdb redis.UniversalClient, rc *Recorded) target {
	return target{name: "replay-go-redis", page: func(ctx context.Context, r reader) (int, error) {
		p, err := rc.page(r)
		if err != nil {
			return 0, err
		}
		for _, f := range p.flights {
			if len(f.args) == 1 {
				if err := rdb.Do(ctx, f.args[0]...).Err(); err != nil && !errors.Is(err, redis.Nil) {
					return 0, err
				}
				continue
			}
			pipe := rdb.Pipeline()
			for _, a := range f.args {
				pipe.Do(ctx, a...)
			}
			if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
				return 0, err
			}
		}
		return p.posts, nil
	}}
}

// rawConn is one plain connection to Redis.
type rawConn struct {
	conn net.Conn
	r    *bufio.Reader
}

func (c *rawConn) Close() error { return c.conn.Close() }

// closePool returns the function that closes the connections left in a
// pool.
func closePool[C io.Closer](pool chan C) func() {
	return func() {
		for {
			select {
			case c := <-pool:
				_ = c.Close()
			default:
				return
			}
		}
	}
}

// dialRaw opens a connection as go-redis would (its dialer, TLS included)
// and sets it up as go-redis does: the protocol, the credentials, the
// database.
func dialRaw(ctx context.Context, opt *redis.Options) (*rawConn, error) {
	conn, err := opt.Dialer(ctx, opt.Network, opt.Addr)
	if err != nil {
		return nil, err
	}
	c := &rawConn{conn: conn, r: bufio.NewReaderSize(conn, 64<<10)}
	var setup []byte
	n := 0
	add := func(args ...any) {
		setup, _ = appendCommand(setup, args)
		n++
	}
	switch {
	case opt.Protocol != 2 && opt.Password != "":
		add("hello", "3", "auth", cmp.Or(opt.Username, "default"), opt.Password)
	case opt.Protocol != 2:
		add("hello", "3")
	case opt.Password != "":
		if opt.Username != "" {
			add("auth", opt.Username, opt.Password)
		} else {
			add("auth", opt.Password)
		}
	}
	if opt.DB != 0 {
		add("select", opt.DB)
	}
	if n > 0 {
		if err := c.roundTrip(setup, n); err != nil {
			_ = conn.Close()
			return nil, fmt.Errorf("replay connection: %w", err)
		}
	}
	return c, nil
}

// roundTrip writes wire and skips n replies; an error reply is an error
// (a page's flights never get one).
func (c *rawConn) roundTrip(wire []byte, n int) error {
	if _, err := c.conn.Write(wire); err != nil {
		return err
	}
	for range n {
		if err := skipReply(c.r); err != nil {
			return err
		}
	}
	return nil
}

// skipReply reads one RESP2 or RESP3 reply and drops it.
func skipReply(r *bufio.Reader) error {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return err
	}
	if len(line) < 3 {
		return fmt.Errorf("replay: bad reply line %q", line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+', ':', ',', '#', '_', '(':
		return nil
	case '-':
		return fmt.Errorf("replay: error reply: %s", body)
	case '$', '!', '=':
		n, err := parseLen(body)
		if err != nil {
			return err
		}
		if n < 0 {
			return nil
		}
		if kind == '!' {
			msg := make([]byte, n+2)
			_, _ = io.ReadFull(r, msg)
			return fmt.Errorf("replay: error reply: %s", msg[:n])
		}
		_, err = r.Discard(n + 2)
		return err
	case '*', '~', '>', '%', '|':
		n, err := parseLen(body)
		if err != nil {
			return err
		}
		switch kind {
		case '%':
			n *= 2
		case '|':
			n = 2*n + 1 // an attribute map, then the reply it annotates
		}
		for range n {
			if err := skipReply(r); err != nil {
				return err
			}
		}
		return nil
	}
	return fmt.Errorf("replay: unknown reply type %q", kind)
}

// parseLen parses the length of a bulk string or an aggregate (-1: null).
func parseLen(b []byte) (int, error) {
	if len(b) == 2 && b[0] == '-' && b[1] == '1' {
		return -1, nil
	}
	n := 0
	for _, c := range b {
		if c < '0' || c > '9' || len(b) > 10 {
			return 0, fmt.Errorf("replay: bad length %q", b)
		}
		n = n*10 + int(c-'0')
	}
	if len(b) == 0 {
		return 0, errors.New("replay: empty length")
	}
	return n, nil
}
