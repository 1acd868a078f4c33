package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/socialgw/gateway/cmd/internal/app"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redistest"
)

// childEnv makes the test binary run the gateway instead of the tests, so
// a test can start gateways as separate processes.
const childEnv = "SOCIALGW_TEST_GATEWAY_PROCESS"

// childAsBinary, as childEnv's value, makes the test binary behave as the
// gateway's binary: its arguments and environment, its exit code.
const childAsBinary = "binary"

// childMain is the gateway process: run with the environment, logs on
// stderr, the ready URL as one line on stdout, stopped by SIGTERM.
func childMain() int {
	if os.Getenv(childEnv) == childAsBinary {
		return app.Code("gateway", true, os.Args[1:], os.Getenv, os.Stderr, func(ctx context.Context, args []string) error {
			return command(ctx, args, os.Getenv, os.Stderr)
		})
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	err := run(ctx, []string{"--listen=127.0.0.1:0"}, os.Getenv, os.Stderr, func(u string) { fmt.Println("READY " + u) })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// gatewayProcess is a gateway running as a process of its own.
type gatewayProcess struct {
	url  string
	logs *syncBuffer // its stderr
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
}

// terminate sends SIGTERM and returns how long the process took to exit
// (failing the test after 30s).
func (p *gatewayProcess) terminate(t testing.TB) time.Duration {
	t.Helper()
	start := time.Now()
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(30 * time.Second):
		t.Fatalf("gateway process still running 30s after SIGTERM")
	}
	return time.Since(start)
}

// startProcess starts a gateway as a child process with env added to the
// test's environment, and returns its URL; it is stopped (SIGTERM, then
// killed after 15 s) when the test ends.
func startProcess(t *testing.T, env map[string]string) string {
	t.Helper()
	return startGatewayProcess(t, env).url
}

// startGatewayProcess is startProcess for tests and benchmarks that also
// read the process's log (shown when the test failed).
func startGatewayProcess(t testing.TB, env map[string]string) *gatewayProcess {
	t.Helper()
	redistest.Slow(t, "starts gateway processes")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	// The process dies with the test binary even when it is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	done := make(chan struct{})
	p := &gatewayProcess{logs: &syncBuffer{}, cmd: cmd, done: done}
	cmd.Stderr = p.logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
			t.Errorf("gateway process did not stop within 15s of SIGTERM")
		}
		if t.Failed() {
			t.Logf("gateway %s log:\n%s", p.url, p.logs)
		}
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "READY "); ok {
				ready <- u
			}
		}
		_ = cmd.Wait()
		close(done)
	}()
	select {
	case p.url = <-ready:
		return p
	case <-done:
		t.Fatalf("gateway process exited before it was ready:\n%s", p.logs)
	case <-time.After(60 * time.Second):
		t.Fatalf("gateway process not ready after 60s:\n%s", p.logs)
	}
	return nil
}

// TestRateLimitsAcrossProcesses: two gateway processes on one Redis share
// every budget. Login attempts alternate between them and the account's
// budget runs out at the same count as on one gateway; the per-address
// request budget is shared too, answered with 429 by whichever process.
func TestRateLimitsAcrossProcesses(t *testing.T) {
	env := redistest.WithEnv(t, map[string]string{
		"REDIS_PREFIX":             redistest.Prefix(t),
		"JWT_SECRET":               testSecret,
		"RATE_LIMIT_LOGIN_ACCOUNT": "4/1h",
		"RATE_LIMIT_LOGIN_IP":      "off",
		"RATE_LIMIT_REGISTER_IP":   "off",
		"RATE_LIMIT_IP":            "20/1h",
		"FANOUT_WORKER":            "false",
	})
	urls := []string{startProcess(t, env), startProcess(t, env)}
	reg := gatewaytest.Post(t, urls[0], "", `mutation { register(input: {name: "shared", email: "shared@example.com", password: "password123"}) { user { id } } }`, nil)
	if reg.Code() != "" {
		t.Fatalf("register: %+v", reg)
	}
	login := func(i int, password string) *gatewaytest.Response {
		return gatewaytest.Post(t, urls[i%2], "", `mutation($p: String!) { login(input: {login: "shared", password: $p}) { user { id } } }`, map[string]any{"p": password})
	}
	for i := range 4 {
		if r := login(i, "wrong password"); r.Code() != "UNAUTHENTICATED" {
			t.Fatalf("attempt %d on process %d: %+v", i, i%2, r)
		}
	}
	for i := range 2 {
		if r := login(i, "password123"); r.Code() != "RATE_LIMITED" {
			t.Fatalf("right password on process %d after the shared budget: %+v, want RATE_LIMITED", i, r)
		}
	}
	// 1 + 4 + 2 requests so far of a budget of 20 per address.
	for n := 7; n < 20; n++ {
		if r := gatewaytest.Post(t, urls[n%2], "", `{ __typename }`, nil); r.Status != 200 {
			t.Fatalf("request %d: %+v", n, r)
		}
	}
	for i := range 2 {
		if r := gatewaytest.Post(t, urls[i], "", `{ __typename }`, nil); r.Status != 429 || r.Code() != "RATE_LIMITED" {
			t.Fatalf("process %d over the shared address budget: %+v, want 429 RATE_LIMITED", i, r)
		}
	}
}
