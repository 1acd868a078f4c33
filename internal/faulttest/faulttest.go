// Package faulttest runs the gateway and the fan-out worker as real
// processes, built from cmd/, against a redis-server that the tests stop,
// kill, freeze, slow down or empty, and gives those tests their tools: the
// processes, a Redis they control, a TCP proxy that delays replies, a
// GraphQL client with its own short timeouts, and readings of a gateway's
// /metrics. Its tests (reliability_test.go) are what docs/reliability.md
// reports. Everything listens on loopback ports chosen by the kernel
// (never 6379) and every wait is bounded.
package faulttest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/redistest"
)

// Secret is the JWT secret of the processes the tests start.
const Secret = "faulttest-secret-0123456789abcdefghij"

var (
	buildOnce sync.Once
	binDir    string
	buildErr  error
)

// Binaries builds cmd/gateway and cmd/worker once per test binary and
// returns the directory holding them.
func Binaries(tb testing.TB) string {
	tb.Helper()
	redistest.Slow(tb, "builds and runs gateway and worker processes")
	buildOnce.Do(func() {
		root, err := moduleRoot()
		if err != nil {
			buildErr = err
			return
		}
		binDir, buildErr = os.MkdirTemp("", "faulttest-bin")
		if buildErr != nil {
			return
		}
		for _, cmd := range []string{"gateway", "worker"} {
			c := exec.Command("go", "build", "-o", filepath.Join(binDir, cmd), "./cmd/"+cmd)
			c.Dir = root
			if out, err := c.CombinedOutput(); err != nil {
				buildErr = fmt.Errorf("go build ./cmd/%s: %v\n%s", cmd, err, out)
				return
			}
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return binDir
}

func moduleRoot() (string, error) {
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	return filepath.Dir(strings.TrimSpace(string(out))), nil
}

// Proc is a running gateway or worker.
type Proc struct {
	Name string
	// URL is a gateway's base URL (empty for a worker).
	URL    string
	cmd    *exec.Cmd
	log    *redistest.Buffer
	exited chan struct{}
	err    error
}

// Env is the environment of a process besides what Start sets.
type Env map[string]string

// StartGateway starts the gateway binary with env (REDIS_URL at least)
// and waits until it logs the address it listens on.
func StartGateway(tb testing.TB, name string, env Env) *Proc {
	tb.Helper()
	return StartGatewayBinary(tb, name, filepath.Join(Binaries(tb), "gateway"), env)
}

// StartGatewayBinary is StartGateway with another build of the gateway:
// the benchmarks compare a tree with an older commit's binary.
func StartGatewayBinary(tb testing.TB, name, path string, env Env) *Proc {
	tb.Helper()
	base := Env{"LISTEN_ADDR": "127.0.0.1:0", "JWT_SECRET": Secret, "LOG_FORMAT": "json", "FANOUT_WORKER": "false", "SHUTDOWN_TIMEOUT": "10s"}
	// Every simulated client comes from 127.0.0.1: the per-address and
	// per-user budgets would throttle the load these tests put on purpose.
	for _, v := range []string{"IP", "MUTATIONS", "REDIS", "LOGIN_IP", "LOGIN_ACCOUNT", "REGISTER_IP", "REGISTER_NAME"} {
		base["RATE_LIMIT_"+v] = "off"
	}
	p := start(tb, name, path, merge(base, env))
	deadline := time.Now().Add(30 * time.Second)
	for p.URL == "" {
		if m := listenRE.FindStringSubmatch(p.log.String()); m != nil {
			p.URL = m[1]
			break
		}
		select {
		case <-p.exited:
			tb.Fatalf("%s exited at start: %v\n%s", name, p.err, p.log)
		default:
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s did not listen within 30s\n%s", name, p.log)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return p
}

var listenRE = regexp.MustCompile(`"msg":"listening","url":"(http://[^"]+)"`)

// StartWorker starts the fan-out worker binary with env.
func StartWorker(tb testing.TB, name string, env Env) *Proc {
	tb.Helper()
	return start(tb, name, filepath.Join(Binaries(tb), "worker"), merge(Env{"LOG_FORMAT": "json", "FANOUT_MIN_IDLE": "2s", "SHUTDOWN_TIMEOUT": "10s"}, env))
}

func merge(a, b Env) Env {
	out := Env{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

func start(tb testing.TB, name, path string, env Env) *Proc {
	tb.Helper()
	cmd := exec.Command(path)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.TempDir()}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	p := &Proc{Name: name, cmd: cmd, log: &redistest.Buffer{}, exited: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = p.log, p.log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		tb.Fatalf("start %s: %v", name, err)
	}
	go func() { p.err = cmd.Wait(); close(p.exited) }()
	tb.Cleanup(func() {
		p.Kill()
		if tb.Failed() {
			tb.Logf("log of %s:\n%s", name, p.log)
		}
	})
	return p
}

// Pid is the process's id (its memory and CPU time are in /proc/PID).
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Kill ends the process with SIGKILL, as a crash would.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Terminate sends SIGTERM and waits, at most timeout, for the process to
// end; it returns the process's exit error (nil for a clean exit).
func (p *Proc) Terminate(tb testing.TB, timeout time.Duration) error {
	tb.Helper()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
		return p.err
	case <-time.After(timeout):
		tb.Fatalf("%s still running %v after SIGTERM\n%s", p.Name, timeout, p.log)
		return nil
	}
}

// Log returns what the process has logged so far.
func (p *Proc) Log() string { return p.log.String() }

// Result is a GraphQL response as a client saw it: the HTTP status, the
// decoded body, or the transport error when there was no response.
type Result struct {
	Status int
	Data   map[string]any
	Errors []struct {
		Message    string         `json:"message"`
		Extensions map[string]any `json:"extensions"`
	}
	// Err is set when no well-formed GraphQL response came back.
	Err error
	// Took is how long the request took.
	Took time.Duration
}

// Code returns the first error's extensions.code ("" when none).
func (r Result) Code() string {
	if len(r.Errors) == 0 {
		return ""
	}
	c, _ := r.Errors[0].Extensions["code"].(string)
	return c
}

// OK reports a response with data and no errors.
func (r Result) OK() bool { return r.Err == nil && len(r.Errors) == 0 && r.Status == http.StatusOK }

// client has its own timeout, longer than any REQUEST_TIMEOUT the tests
// set: a request that takes longer is a hang the tests report.
var client = &http.Client{Timeout: 20 * time.Second}

// Query sends a document to a gateway as the holder of token and never
// fails the test: what happened is in the Result.
func Query(baseURL, token, doc string, vars map[string]any) Result {
	body, _ := json.Marshal(map[string]any{"query": doc, "variables": vars})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, baseURL+"/query", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	start := time.Now()
	resp, err := client.Do(req)
	r := Result{}
	if err != nil {
		r.Err, r.Took = err, time.Since(start)
		return r
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	r.Status, r.Took = resp.StatusCode, time.Since(start)
	if err != nil {
		r.Err = err
		return r
	}
	if err := json.Unmarshal(b, &r); err != nil || (r.Data == nil && len(r.Errors) == 0) {
		r.Err = fmt.Errorf("not a GraphQL response (status %d): %q", resp.StatusCode, b)
	}
	return r
}

// MustQuery is Query that fails the test unless the response has data and
// no errors.
func MustQuery(tb testing.TB, baseURL, token, doc string, vars map[string]any) Result {
	tb.Helper()
	r := Query(baseURL, token, doc, vars)
	if !r.OK() {
		tb.Fatalf("query failed: status %d, err %v, errors %+v\n%s", r.Status, r.Err, r.Errors, doc)
	}
	return r
}

// Ready returns the status of a gateway's /readyz.
func Ready(baseURL string) int {
	resp, err := client.Get(baseURL + "/readyz")
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// Metric returns the value of an unlabelled metric of a gateway's
// /metrics (e.g. go_goroutines), or -1 when it is missing.
func Metric(tb testing.TB, baseURL, name string) float64 {
	tb.Helper()
	resp, err := client.Get(baseURL + "/metrics")
	if err != nil {
		tb.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err == nil {
				return f
			}
		}
	}
	return -1
}

// Proxy is a TCP proxy in front of a Redis that can delay what Redis
// answers: a slow network or a slow server, past the client's read timeout.
type Proxy struct {
	Addr   string
	ln     net.Listener
	target string
	mu     sync.Mutex
	delay  time.Duration
	conns  []net.Conn
}

// Accepted returns how many connections the proxy has taken: a client
// drops a connection whose reply timed out and dials a new one, so this
// counts the timeouts.
func (p *Proxy) Accepted() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) / 2
}

// NewProxy starts a proxy to target, closed when the test ends.
func NewProxy(tb testing.TB, target string) *Proxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	p := &Proxy{Addr: ln.Addr().String(), ln: ln, target: target}
	go p.serve()
	tb.Cleanup(p.Close)
	return p
}

// SetDelay makes every reply chunk from Redis wait d before it is passed
// on (0: none).
func (p *Proxy) SetDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

func (p *Proxy) currentDelay() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delay
}

// Close stops the proxy and its connections.
func (p *Proxy) Close() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

func (p *Proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		go func() { _, _ = io.Copy(u, c); u.Close() }()
		go func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := u.Read(buf)
				if n > 0 {
					if d := p.currentDelay(); d > 0 {
						time.Sleep(d)
					}
					if _, werr := c.Write(buf[:n]); werr != nil {
						break
					}
				}
				if err != nil {
					break
				}
			}
			c.Close()
		}()
	}
}
