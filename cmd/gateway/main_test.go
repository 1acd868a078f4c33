package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/socialgw/gateway/internal/demo"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redistest"
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	redistest.Main(m)
}

const testSecret = "main-test-secret-0123456789abcdefghij"

// syncBuffer collects the gateway's log lines, written from many goroutines.
type syncBuffer = redistest.Buffer

// running is run() serving in the background.
type running struct {
	url    string
	out    *syncBuffer
	cancel context.CancelFunc
	done   chan error
	ready  chan string
	once   sync.Once
	err    error
	// checked is set when the test called stop and judged run's result.
	checked bool
}

// launch runs the gateway on a free port with env as its environment and
// returns once it is ready; it is stopped when the test ends.
func launch(t *testing.T, env map[string]string, args ...string) *running {
	t.Helper()
	return begin(t, env, args...).waitReady(t)
}

// begin is launch without the wait for the gateway to be ready.
func begin(t *testing.T, env map[string]string, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	g := &running{out: &syncBuffer{}, cancel: cancel, done: make(chan error, 1), ready: make(chan string, 1)}
	go func() {
		g.done <- run(ctx, append([]string{"--listen=127.0.0.1:0"}, args...), mapEnv(env), g.out,
			func(u string) { g.ready <- u })
	}()
	t.Cleanup(func() {
		if checked := g.checked; !checked {
			if err := g.stop(t); err != nil {
				t.Errorf("run: %v", err)
			}
		}
	})
	return g
}

// waitReady returns g once it serves.
func (g *running) waitReady(t *testing.T) *running {
	t.Helper()
	select {
	case g.url = <-g.ready:
		return g
	case err := <-g.done:
		g.once.Do(func() {})
		g.checked = true
		t.Fatalf("run returned before it was ready: %v\n%s", err, g.out)
	case <-time.After(30 * time.Second):
		t.Fatalf("gateway not ready after 30s\n%s", g.out)
	}
	return nil
}

// stop cancels run's context and returns its result.
func (g *running) stop(t *testing.T) error {
	t.Helper()
	g.checked = true
	g.once.Do(func() {
		g.cancel()
		select {
		case g.err = <-g.done:
		case <-time.After(30 * time.Second):
			g.err = errors.New("run did not return within 30s of cancellation")
		}
	})
	return g.err
}

func mapEnv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// get fetches path and returns status, headers and body.
func (g *running) get(t *testing.T, path string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(g.url + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// query posts a document as the holder of token ("" for anonymous).
func (g *running) query(t *testing.T, token, doc string, vars map[string]any) *gatewaytest.Response {
	t.Helper()
	return gatewaytest.Post(t, g.url, token, doc, vars)
}

// closedAddr returns a local address nothing listens on (never 6379).
func closedAddr(t *testing.T) string {
	t.Helper()
	for {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		if !strings.HasSuffix(addr, ":6379") {
			return addr
		}
	}
}

func TestRunServes(t *testing.T) {
	g := launch(t, redistest.WithEnv(t, map[string]string{"JWT_SECRET": testSecret}))
	if !strings.HasPrefix(g.url, "http://127.0.0.1:") {
		t.Errorf("ready URL %q", g.url)
	}
	if r := g.query(t, "", `{ __typename }`, nil); r.Data["__typename"] != "Query" {
		t.Errorf("query: %+v", r)
	}
	// An anonymous home timeline: refused, and counted as a fast-path
	// fallback.
	g.query(t, "", `{ timeline { edges { cursor } } }`, nil)
	tests := []struct {
		path, contentType, contains string
		status                      int
	}{
		{"/healthz", "", "ok", 200},
		{"/readyz", "", "ready", 200},
		{"/metrics", "text/plain", `gateway_http_requests_total{code="200",path="/query"}`, 200},
		{"/metrics", "text/plain", "go_goroutines", 200},
		{"/metrics", "text/plain", `gateway_fastpath_fallbacks_total{reason="anonymous"} 1`, 200},
		{"/metrics", "text/plain", "gateway_fastpath_pages_total 0", 200},
		{"/", "text/html", "graphiql", 200},
		{"/nowhere", "", "", 404},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			status, h, body := g.get(t, tt.path)
			if status != tt.status {
				t.Fatalf("status %d, want %d", status, tt.status)
			}
			if !strings.HasPrefix(h.Get("Content-Type"), tt.contentType) {
				t.Errorf("Content-Type %q, want %s", h.Get("Content-Type"), tt.contentType)
			}
			if !strings.Contains(strings.ToLower(body), strings.ToLower(tt.contains)) {
				t.Errorf("body does not contain %q:\n%.500s", tt.contains, body)
			}
			if h.Get("X-Request-Id") == "" {
				t.Errorf("no X-Request-Id")
			}
		})
	}
	if log := g.out.String(); !strings.Contains(log, "listening") || !strings.Contains(log, g.url) {
		t.Errorf("log lacks the listening line with %s:\n%s", g.url, log)
	}
}

// TestProductionSwitches: production turns off GraphiQL, introspection and
// suggestions unless each is enabled explicitly.
func TestProductionSwitches(t *testing.T) {
	const introspect = `{ __schema { queryType { name } } }`
	tests := []struct {
		name                              string
		env                               map[string]string
		graphiql, introspection, suggests bool
	}{
		{"development", nil, true, true, true},
		{"production", map[string]string{"PRODUCTION": "true", "MEDIA_SIGNING_KEY": testSecret, "MEDIA_DIR": t.TempDir(), "SMTP_URL": testSMTP}, false, false, false},
		{"production with GraphiQL", map[string]string{"PRODUCTION": "true", "MEDIA_SIGNING_KEY": testSecret, "MEDIA_DIR": t.TempDir(), "SMTP_URL": testSMTP, "GRAPHIQL": "true"}, true, false, false},
		{"production with introspection", map[string]string{"PRODUCTION": "1", "MEDIA_SIGNING_KEY": testSecret, "MEDIA_DIR": t.TempDir(), "SMTP_URL": testSMTP, "INTROSPECTION": "true"}, false, true, true},
		{"development without GraphiQL", map[string]string{"GRAPHIQL": "false"}, false, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := redistest.WithEnv(t, map[string]string{"JWT_SECRET": testSecret})
			for k, v := range tt.env {
				env[k] = v
			}
			g := launch(t, env)
			wantStatus := map[bool]int{true: 200, false: 404}
			if status, _, _ := g.get(t, "/"); status != wantStatus[tt.graphiql] {
				t.Errorf("GET / = %d, want %d", status, wantStatus[tt.graphiql])
			}
			if status, _, _ := g.get(t, "/graphiql/graphiql-4.1.2.min.js"); status != wantStatus[tt.graphiql] {
				t.Errorf("GraphiQL asset = %d, want %d", status, wantStatus[tt.graphiql])
			}
			r := g.query(t, "", introspect, nil)
			if got := r.Data["__schema"] != nil && len(r.Errors) == 0; got != tt.introspection {
				t.Errorf("introspection answered = %v, want %v: %+v", got, tt.introspection, r)
			}
			aliased := g.query(t, "", `{ a: __type(name: "User") { name } b: __schema { types { name } } }`, nil)
			if !tt.introspection && (r.Code() != "GRAPHQL_VALIDATION_FAILED" || aliased.Code() != "GRAPHQL_VALIDATION_FAILED" ||
				strings.Contains(g.out.String(), "level=ERROR") || strings.Contains(g.out.String(), `"level":"ERROR"`)) {
				t.Errorf("introspection refused with %q (want GRAPHQL_VALIDATION_FAILED, nothing logged as an error):\n%s", r.Code(), g.out)
			}
			wantMetrics := map[bool]int{true: 404, false: 200}[tt.env["PRODUCTION"] != ""]
			if status, _, _ := g.get(t, "/metrics"); status != wantMetrics {
				t.Errorf("/metrics = %d, want %d", status, wantMetrics)
			}
			r = g.query(t, "", `{ mee { id } }`, nil)
			if len(r.Errors) == 0 {
				t.Fatalf("unknown field accepted")
			}
			if got := strings.Contains(r.Errors[0].Message, "Did you mean"); got != tt.suggests {
				t.Errorf("suggestion in %q = %v, want %v", r.Errors[0].Message, got, tt.suggests)
			}
			if status, _, _ := g.get(t, "/healthz"); status != 200 {
				t.Errorf("/healthz = %d", status)
			}
		})
	}
}

// TestMetricsListener: with METRICS_ADDR, /metrics is served there only.
func TestMetricsListener(t *testing.T) {
	env := redistest.WithEnv(t, map[string]string{"JWT_SECRET": testSecret, "PRODUCTION": "true", "METRICS_ADDR": "127.0.0.1:0",
		"MEDIA_SIGNING_KEY": testSecret, "MEDIA_DIR": t.TempDir(), "SMTP_URL": testSMTP})
	g := launch(t, env)
	if status, _, _ := g.get(t, "/metrics"); status != 404 {
		t.Errorf("/metrics on the public listener = %d, want 404", status)
	}
	// PRODUCTION=true logs JSON.
	m := regexp.MustCompile(`"msg":"metrics served","url":"([^"]+)"`).FindStringSubmatch(g.out.String())
	if m == nil {
		t.Fatalf("no metrics address logged:\n%s", g.out)
	}
	resp, err := http.Get(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(b), "go_goroutines") {
		t.Fatalf("%s = %d", m[1], resp.StatusCode)
	}
}

func TestHelp(t *testing.T) {
	var out bytes.Buffer
	err := run(context.Background(), []string{"--help"}, mapEnv(nil), &out, func(string) { t.Error("--help started the server") })
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("run(--help) = %v, want flag.ErrHelp", err)
	}
	help := out.String()
	for _, s := range (&Config{}).settings() {
		for _, want := range []string{"-" + s.Flag, s.Env, fmt.Sprintf("default %q", s.Def)} {
			if !strings.Contains(help, want) {
				t.Errorf("--help lacks %q for --%s", want, s.Flag)
			}
		}
	}
}

// TestConfigPrecedence: a flag wins over its variable, which wins over the
// default.
func TestConfigPrecedence(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want func(c *Config) bool
	}{
		{"default", nil, nil, func(c *Config) bool { return c.ListenAddr == ":8080" && c.AccessTokenTTL == 15*time.Minute }},
		{"environment", map[string]string{"LISTEN_ADDR": ":9000"}, nil, func(c *Config) bool { return c.ListenAddr == ":9000" }},
		{"flag over environment", map[string]string{"LISTEN_ADDR": ":9000"}, []string{"--listen=:9001"}, func(c *Config) bool { return c.ListenAddr == ":9001" }},
		{"flag repairs a bad variable", map[string]string{"LOG_FORMAT": "json"}, []string{"--log-format", "text"}, func(c *Config) bool { return c.LogFormat == "text" }},
		{"CORS list", map[string]string{"CORS_ORIGINS": " https://a.example, ,https://b.example "}, nil,
			func(c *Config) bool { return strings.Join(c.CORSOrigins, "|") == "https://a.example|https://b.example" }},
		{"production defaults", productionEnv(nil), nil,
			func(c *Config) bool {
				return !c.GraphiQL && !c.Introspection && c.RedisWait == 30*time.Second && c.LogFormat == "json"
			}},
		{"production without a Redis wait", productionEnv(map[string]string{"REDIS_WAIT": "0"}), nil,
			func(c *Config) bool { return c.RedisWait == 0 }},
		{"production with text logs", productionEnv(map[string]string{"LOG_FORMAT": "text"}), nil,
			func(c *Config) bool { return c.LogFormat == "text" }},
		{"production with text logs by flag", productionEnv(nil), []string{"--log-format=text"},
			func(c *Config) bool { return c.LogFormat == "text" }},
		{"development logs text", nil, nil, func(c *Config) bool { return c.LogFormat == "text" }},
		{"development starts without waiting for Redis", nil, nil, func(c *Config) bool { return c.RedisWait == 0 }},
		{"development with a Redis wait", map[string]string{"REDIS_WAIT": "5s"}, nil, func(c *Config) bool { return c.RedisWait == 5*time.Second }},
		{"boolean flag alone", nil, []string{"--demo"}, func(c *Config) bool { return c.Demo }},
		{"boolean flag off", map[string]string{"DEMO": "true"}, []string{"--demo=false"}, func(c *Config) bool { return !c.Demo }},
		{"demo lowers the celebrity threshold", nil, []string{"--demo"},
			func(c *Config) bool { return c.Feed.Store.CelebrityThreshold == demo.DefaultCelebrityThreshold }},
		{"demo keeps an explicit celebrity threshold", map[string]string{"CELEBRITY_THRESHOLD": "50"}, []string{"--demo"},
			func(c *Config) bool { return c.Feed.Store.CelebrityThreshold == 50 }},
		{"no demo, usual threshold", nil, nil, func(c *Config) bool { return c.Feed.Store.CelebrityThreshold == 10000 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := parseConfig(tt.args, mapEnv(tt.env), io.Discard)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.want(c) {
				t.Errorf("config %+v", c)
			}
		})
	}
}

// TestBadConfig: every bad setting stops run before it serves, with an
// error naming the setting.
func TestBadConfig(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		env  map[string]string
		args []string
		want string // in the error
	}{
		{"duration", map[string]string{"ACCESS_TOKEN_TTL": "soon"}, nil, "ACCESS_TOKEN_TTL"},
		{"negative duration", map[string]string{"ACCESS_TOKEN_TTL": "-1m"}, nil, "positive"},
		{"zero refresh lifetime", map[string]string{"REFRESH_TOKEN_TTL": "0s"}, nil, "positive"},
		{"boolean", map[string]string{"REDIS_CLUSTER": "maybe"}, nil, "REDIS_CLUSTER"},
		{"cluster without its nodes", map[string]string{"REDIS_CLUSTER": "true", "REDIS_URL": ""}, nil, "REDIS_CLUSTER"},
		{"REDIS_CLUSTER not matching the server", map[string]string{"REDIS_CLUSTER": strconv.FormatBool(!redistest.ClusterMode())}, nil, "REDIS_CLUSTER"},
		{"production switch", map[string]string{"PRODUCTION": "yes please"}, nil, "PRODUCTION"},
		{"graphiql switch", map[string]string{"GRAPHIQL": "perhaps"}, nil, "graphiql"},
		{"introspection switch", map[string]string{"INTROSPECTION": "2"}, nil, "introspection"},
		{"body limit with unit", map[string]string{"MAX_BODY_BYTES": "1MB"}, nil, "MAX_BODY_BYTES"},
		{"zero body limit", map[string]string{"MAX_BODY_BYTES": "0"}, nil, "body"},
		{"negative body rate", map[string]string{"MIN_BODY_RATE": "-1"}, nil, "MIN_BODY_RATE"},
		{"complexity", map[string]string{"COMPLEXITY_LIMIT": "lots"}, nil, "COMPLEXITY_LIMIT"},
		{"password concurrency", map[string]string{"PASSWORD_CONCURRENCY": "0"}, nil, "concurrency"},
		{"rate limit without a period", map[string]string{"RATE_LIMIT_IP": "600"}, nil, "RATE_LIMIT_IP"},
		{"rate limit period under a second", map[string]string{"RATE_LIMIT_LOGIN_ACCOUNT": "10/1ms"}, nil, "RATE_LIMIT_LOGIN_ACCOUNT"},
		{"trusted proxy", map[string]string{"TRUSTED_PROXIES": "10.0.0.0/40"}, nil, "TRUSTED_PROXIES"},
		{"refresh grace over a minute", map[string]string{"REFRESH_GRACE": "5m"}, nil, "grace"},
		{"negative persisted-query cap", map[string]string{"APQ_MAX_ENTRIES": "-1"}, nil, "persisted"},
		{"log format", map[string]string{"LOG_FORMAT": "xml"}, nil, "xml"},
		{"log level", map[string]string{"LOG_LEVEL": "loud"}, nil, "loud"},
		{"short JWT secret", map[string]string{"JWT_SECRET": strings.Repeat("s", 31)}, nil, "32"},
		{"JWT secret of one byte", map[string]string{"JWT_SECRET": strings.Repeat("a", 32)}, nil, "JWT_SECRET has 1 distinct bytes"},
		{"JWT secret repeating a word", map[string]string{"JWT_SECRET": strings.Repeat("correct-horse-", 3)}, nil, "JWT_SECRET repeats a pattern of 14 bytes"},
		{"JWT secret of hex digits twice", map[string]string{"JWT_SECRET": strings.Repeat("0123456789abcdef", 2)}, nil, "JWT_SECRET repeats"},
		{"media signing key of one byte", map[string]string{"MEDIA_SIGNING_KEY": strings.Repeat("k", 40)}, nil, "MEDIA_SIGNING_KEY has 1 distinct"},
		{"production without a JWT secret", productionEnv(map[string]string{"JWT_SECRET": ""}), nil, "needs JWT_SECRET"},
		{"JWT method none", map[string]string{"JWT_METHOD": "none", "JWT_SECRET": testSecret}, nil, "none"},
		{"EdDSA without key files", map[string]string{"JWT_METHOD": "EdDSA"}, nil, "EdDSA"},
		{"missing key file", map[string]string{"JWT_METHOD": "EdDSA", "JWT_PRIVATE_KEY_FILE": filepath.Join(dir, "nope.pem")}, nil, "nope.pem"},
		{"garbage key file", map[string]string{"JWT_METHOD": "RS256", "JWT_PRIVATE_KEY_FILE": garbage, "JWT_PUBLIC_KEY_FILE": garbage}, nil, "RS256"},
		{"redis URL scheme", map[string]string{"REDIS_URL": "http://localhost:1"}, nil, "redis"},
		{"listen address", nil, []string{"--listen=256.0.0.1:x"}, "listen"},
		{"unknown flag", nil, []string{"--nope"}, "nope"},
		{"positional argument", nil, []string{"extra"}, "extra"},
		{"demo in production", map[string]string{"DEMO": "true", "PRODUCTION": "true"}, nil, "demo"},
		{"production without REDIS_URL", productionEnv(map[string]string{"REDIS_URL": ""}), nil, "REDIS_URL"},
		{"Redis wait not a duration", map[string]string{"REDIS_WAIT": "soon"}, nil, "REDIS_WAIT"},
		{"negative Redis wait", map[string]string{"REDIS_WAIT": "-1s"}, nil, "REDIS_WAIT"},
		{"Redis not answering within REDIS_WAIT", map[string]string{"REDIS_URL": "redis://:hunter2@" + closedAddr(t), "REDIS_WAIT": "1s"}, nil, "did not answer within REDIS_WAIT"},
		{"production without a media signing key", productionEnv(map[string]string{"MEDIA_SIGNING_KEY": ""}), nil, "MEDIA_SIGNING_KEY"},
		{"production without a mail server", productionEnv(map[string]string{"SMTP_URL": ""}), nil, "PRODUCTION=true needs SMTP_URL"},
		{"mail server of another scheme", map[string]string{"SMTP_URL": "http://mail.example.com"}, nil, "SMTP_URL must start with smtp://"},
		{"reset tokens that never work", map[string]string{"RESET_TOKEN_TTL": "0s"}, nil, "RESET_TOKEN_TTL"},
		{"production without media storage", productionEnv(map[string]string{"MEDIA_DIR": ""}), nil, "MEDIA_URL"},
		{"short media signing key", map[string]string{"MEDIA_SIGNING_KEY": "short"}, nil, "MEDIA_SIGNING_KEY"},
		{"zero media files", map[string]string{"MEDIA_MAX_FILES": "0"}, nil, "media"},
		{"demo threshold too high", map[string]string{"CELEBRITY_THRESHOLD": "10000"}, []string{"--demo"}, "CELEBRITY_THRESHOLD"},
		{"SPA_DIR missing", map[string]string{"SPA_DIR": filepath.Join(dir, "nope")}, nil, "SPA_DIR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// A database of its own: the demo refuses a non-empty one
			// before it looks at the threshold.
			env := emptyDB(t, 11)
			for k, v := range tt.env {
				env[k] = v
			}
			done := make(chan error, 1)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				done <- run(ctx, tt.args, mapEnv(env), io.Discard, func(string) { t.Error("bad configuration served") })
			}()
			select {
			case err := <-done:
				if err == nil || errors.Is(err, flag.ErrHelp) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("run = %v, want an error about %q", err, tt.want)
				}
			case <-time.After(20 * time.Second):
				cancel()
				t.Fatalf("run did not refuse the configuration")
			}
		})
	}
}

// holdRequest opens a POST /query whose body the server has started to
// read (it answered 100 Continue), and returns the connection with the
// rest of the body still to be sent.
func holdRequest(t *testing.T, g *running) (net.Conn, *bufio.Reader, string) {
	t.Helper()
	u, _ := url.Parse(g.url)
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	const body = `{"query": "{ __typename }"}`
	fmt.Fprintf(conn, "POST /query HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", u.Host, len(body))
	br := bufio.NewReader(conn)
	_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 100") {
		t.Fatalf("want 100 Continue, got %q, %v", line, err)
	}
	if blank, err := br.ReadString('\n'); err != nil || blank != "\r\n" {
		t.Fatalf("after 100 Continue: %q, %v", blank, err)
	}
	return conn, br, body
}

// waitPortClosed waits until nothing accepts connections at the gateway's
// address.
func waitPortClosed(t *testing.T, g *running) {
	t.Helper()
	u, _ := url.Parse(g.url)
	redistest.Eventually(t, 10*time.Second, u.Host+" to stop accepting connections", func() bool {
		c, err := net.DialTimeout("tcp", u.Host, time.Second)
		if err != nil {
			return true
		}
		c.Close()
		return false
	})
}

// TestGracefulShutdown cancels run while a request is in flight: the
// listener closes at once, the request still gets its answer, and run then
// returns nil.
func TestGracefulShutdown(t *testing.T) {
	g := launch(t, redistest.WithEnv(t, map[string]string{"JWT_SECRET": testSecret}))
	conn, br, body := holdRequest(t, g)

	g.cancel()
	waitPortClosed(t, g)
	select {
	case err := <-g.done:
		t.Fatalf("run returned with a request in flight: %v", err)
	default:
	}

	if _, err := io.WriteString(conn, body); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatalf("in-flight request: %v", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"__typename":"Query"`) {
		t.Errorf("in-flight request answered %d %s", resp.StatusCode, b)
	}
	start := time.Now()
	if err := g.stop(t); err != nil {
		t.Errorf("run = %v, want nil", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("run returned %v after the last request", d)
	}
	if !strings.Contains(g.out.String(), "stopped") {
		t.Errorf("no 'stopped' log line:\n%s", g.out)
	}
}

// TestShutdownDeadline: a request that does not finish within
// SHUTDOWN_TIMEOUT is cut off, and run reports the deadline.
func TestShutdownDeadline(t *testing.T) {
	g := launch(t, redistest.WithEnv(t, map[string]string{"JWT_SECRET": testSecret, "SHUTDOWN_TIMEOUT": "300ms"}))
	conn, br, _ := holdRequest(t, g)
	start := time.Now()
	err := g.stop(t)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("run = %v, want the shutdown deadline", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("run returned after %v with a 300ms shutdown timeout", d)
	}
	// The stuck connection is closed, not left to the read timeout.
	_ = conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := br.ReadByte(); err == nil || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("the stuck connection is still open after run returned: %v", err)
	}
}

// TestEmbeddedRedis: with no REDIS_URL and no JWT_SECRET the gateway works
// out of the box, warning that data and tokens do not survive a restart.
func TestEmbeddedRedis(t *testing.T) {
	g := launch(t, nil)
	log := g.out.String()
	for _, want := range []string{"REDIS_URL is not set", "JWT_SECRET is not set"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}
	registerAndMe(t, g)
	// One plain word on client tracking, which the embedded Redis lacks.
	if log := g.out.String(); strings.Count(log, "no client tracking") != 1 || strings.Contains(log, "tracking the servers") ||
		strings.Contains(log, "unknown subcommand") {
		t.Errorf("want client tracking said unavailable once:\n%s", log)
	}
	if status, _, _ := g.get(t, "/readyz"); status != 200 {
		t.Errorf("/readyz = %d", status)
	}
}

// TestEmbeddedRedisClock: keys of the embedded Redis expire with the wall
// clock, as on a real server (miniredis counts TTLs down only when told).
func TestEmbeddedRedisClock(t *testing.T) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	stop := runClock(m, 10*time.Millisecond)
	defer stop()
	m.Set("k", "v")
	m.SetTTL("k", 200*time.Millisecond)
	redistest.Eventually(t, 5*time.Second, "the key with a 200 ms TTL to expire", func() bool { return !m.Exists("k") })
}

// TestEdDSAKeyFiles runs the gateway with EdDSA key files.
func TestEdDSAKeyFiles(t *testing.T) {
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	privDER, _ := x509.MarshalPKCS8PrivateKey(priv)
	pubDER, _ := x509.MarshalPKIXPublicKey(priv.Public())
	dir := t.TempDir()
	privFile, pubFile := filepath.Join(dir, "jwt.key"), filepath.Join(dir, "jwt.pub")
	if err := os.WriteFile(privFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	g := launch(t, redistest.WithEnv(t, map[string]string{"REDIS_PREFIX": "eddsa:"}),
		"--jwt-method=EdDSA", "--jwt-private-key-file="+privFile, "--jwt-public-key-file="+pubFile)
	tok := registerAndMe(t, g)
	header, _, _ := strings.Cut(tok, ".")
	if header != "eyJhbGciOiJFZERTQSIsInR5cCI6IkpXVCJ9" { // {"alg":"EdDSA","typ":"JWT"}
		t.Errorf("token header %q is not EdDSA", header)
	}
}

// registerAndMe registers an account over HTTP, checks me with its token
// and returns the token.
func registerAndMe(t *testing.T, g *running) string {
	t.Helper()
	r := g.query(t, "", `mutation($i: RegisterInput!) { register(input: $i) { accessToken user { name } } }`,
		map[string]any{"i": map[string]any{"name": "first_user", "email": "first@example.com", "password": "password123"}})
	reg, _ := r.Data["register"].(map[string]any)
	tok, _ := reg["accessToken"].(string)
	if len(r.Errors) > 0 || tok == "" {
		t.Fatalf("register: %+v", r)
	}
	me := g.query(t, tok, `{ me { name } }`, nil)
	if m, _ := me.Data["me"].(map[string]any); m == nil || m["name"] != "first_user" {
		t.Fatalf("me: %+v", me)
	}
	return tok
}

// testSMTP is an SMTP_URL that parses; no test of this file sends to it.
const testSMTP = "smtp://mail.invalid:2525"

// productionEnv is a production environment that starts (but for
// REDIS_URL, which the caller adds), with extra's values over it; an
// empty value removes the variable.
func productionEnv(extra map[string]string) map[string]string {
	env := map[string]string{"PRODUCTION": "true", "REDIS_URL": "redis://r:6380", "JWT_SECRET": testSecret,
		"MEDIA_SIGNING_KEY": testSecret + "-media", "MEDIA_DIR": "media", "SMTP_URL": testSMTP}
	for k, v := range extra {
		env[k] = v
	}
	return env
}
