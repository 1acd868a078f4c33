package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The HTTP attackers of TestRedisHeavyAttacks run in processes of their
// own: this test binary, run again with ATTACKER_URL set, as
// TestHTTPAttacker.

// attackFrom runs an attacker process as the client at addr, sending
// docs in turn until ctx ends, logs its answers by status and returns
// the CPU time it used.
func attackFrom(ctx context.Context, t *testing.T, url, addr, token string, docs ...string) time.Duration {
	file := filepath.Join(t.TempDir(), "docs.json")
	b, _ := json.Marshal(docs)
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Error(err)
		return 0
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHTTPAttacker$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ATTACKER_URL="+url, "ATTACKER_ADDR="+addr, "ATTACKER_TOKEN="+token, "ATTACKER_DOCS="+file)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Error(err)
		return 0
	}
	<-ctx.Done()
	_ = cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Errorf("attacker %s: %v\n%s", addr, err, out.String())
	}
	for line := range strings.SplitSeq(out.String(), "\n") {
		if strings.HasPrefix(line, "attacker ") {
			t.Log(line)
		}
	}
	return cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
}

// TestHTTPAttacker is one attacker of TestRedisHeavyAttacks: it posts the
// documents in turn, each as soon as the last was answered, whatever the
// answer, until interrupted, then prints its answers by status.
func TestHTTPAttacker(t *testing.T) {
	url := os.Getenv("ATTACKER_URL")
	if url == "" {
		t.Skip("an attacker process of TestRedisHeavyAttacks")
	}
	var docs []string
	b, err := os.ReadFile(os.Getenv("ATTACKER_DOCS"))
	if err == nil {
		err = json.Unmarshal(b, &docs)
	}
	if err != nil || len(docs) == 0 {
		t.Fatalf("documents: %v", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	addr, token := os.Getenv("ATTACKER_ADDR"), os.Getenv("ATTACKER_TOKEN")
	statuses := map[int]int{}
	for i := 0; ctx.Err() == nil; i++ {
		status, _ := postAs(t, url, addr, token, docs[i%len(docs)])
		statuses[status]++
	}
	fmt.Printf("attacker %s: answers by status %v\n", addr, statuses)
}

// processCPU is the CPU time (user and system) this process has used.
func processCPU(tb testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
