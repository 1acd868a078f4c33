package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/redistest"
)

// TestReadyzWithoutRedis: with REDIS_WAIT=0 (development's default) a
// gateway whose Redis does not answer starts, answers 503 on /readyz, and
// logs an error naming the address (never its password), again and again.
func TestReadyzWithoutRedis(t *testing.T) {
	addr := closedAddr(t)
	g := launch(t, map[string]string{"REDIS_URL": "redis://:hunter2@" + addr, "JWT_SECRET": testSecret})
	if status, _, _ := g.get(t, "/healthz"); status != 200 {
		t.Errorf("/healthz = %d, want 200", status)
	}
	if status, _, body := g.get(t, "/readyz"); status != http.StatusServiceUnavailable {
		t.Errorf("/readyz = %d %q, want 503", status, body)
	}
	errorLines := func() int {
		n := 0
		for _, line := range strings.Split(g.out.String(), "\n") {
			if strings.Contains(line, "level=ERROR") && strings.Contains(line, "redis does not answer") && strings.Contains(line, addr) {
				n++
			}
		}
		return n
	}
	// One line at start and one repeat; the schedule of the repeats is
	// TestWatchRedisBackoff's (cmd/internal/app).
	redistest.Eventually(t, 10*time.Second, "an ERROR line naming "+addr+" at start and repeated while Redis is down", func() bool {
		return errorLines() >= 2
	})
	if strings.Contains(g.out.String(), "hunter2") {
		t.Errorf("the log shows REDIS_URL's password:\n%s", g.out)
	}
}

// TestRedisWaitNamesAddress: a Redis that does not answer within
// REDIS_WAIT stops the gateway with an error naming the address, without
// its password.
func TestRedisWaitNamesAddress(t *testing.T) {
	addr := closedAddr(t)
	start := time.Now()
	err := run(context.Background(), nil, mapEnv(map[string]string{"REDIS_URL": "redis://:hunter2@" + addr, "REDIS_WAIT": "700ms"}),
		io.Discard, func(string) { t.Error("served without Redis") })
	if err == nil || !strings.Contains(err.Error(), addr) || !strings.Contains(err.Error(), "REDIS_WAIT") || strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("run = %v, want an error naming %s and REDIS_WAIT, without the password", err, addr)
	}
	if took := time.Since(start); took < 700*time.Millisecond || took > 10*time.Second {
		t.Errorf("gave up after %s, want about REDIS_WAIT (700ms)", took)
	}
}

// TestRedisWaitRedisLate: a Redis that starts answering within REDIS_WAIT
// is waited for, and the gateway then serves as usual.
func TestRedisWaitRedisLate(t *testing.T) {
	if redistest.ClusterMode() {
		t.Skip("forwards one server's port")
	}
	target := redistest.Addr(t)
	addr := closedAddr(t)
	env := redistest.WithEnv(t, map[string]string{"JWT_SECRET": testSecret, "REDIS_WAIT": "20s"})
	env["REDIS_URL"] = "redis://" + addr
	g := begin(t, env)
	// Redis starts once the gateway has found it down and waits.
	redistest.Eventually(t, 15*time.Second, "a line saying the gateway waits for Redis", func() bool {
		return strings.Contains(g.out.String(), "waiting for redis")
	})
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	t.Cleanup(func() { ln.Close() })
	go forward(ln, target)
	g.waitReady(t)
	if status, _, body := g.get(t, "/readyz"); status != 200 {
		t.Errorf("/readyz = %d %q, want 200", status, body)
	}
}

// forward copies every connection ln accepts to target and back.
func forward(ln net.Listener, target string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			u, err := net.Dial("tcp", target)
			if err != nil {
				return
			}
			defer u.Close()
			go func() { _, _ = io.Copy(u, c) }()
			_, _ = io.Copy(c, u)
		}()
	}
}
