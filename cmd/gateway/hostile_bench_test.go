package main

import (
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/faulttest"
	"github.com/socialgw/gateway/internal/gqlguard/hostile"
	"github.com/socialgw/gateway/internal/redistest"
)

// BenchmarkHostile measures what one request of each hostile class costs
// a gateway process: its CPU time (user and system, from /proc) and its
// peak resident memory above what it held before the request (VmHWM,
// reset before each request). GATEWAY_BIN runs another build, to compare
// two; HOSTILE_TIMEOUT bounds one request (default 2m), HOSTILE_ONLY
// names the classes to run (comma-separated; default all).
//
//	go test -run '^$' -bench Hostile -benchtime 20x ./cmd/gateway/
func BenchmarkHostile(b *testing.B) {
	timeout := 2 * time.Minute
	if v := os.Getenv("HOSTILE_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil {
			b.Fatal(err)
		}
		timeout = d
	}
	env := redistest.WithEnv(b, faulttest.Env{"REDIS_PREFIX": redistest.Prefix(b), "REQUEST_TIMEOUT": "10s"})
	var gw *faulttest.Proc
	if bin := os.Getenv("GATEWAY_BIN"); bin != "" {
		gw = faulttest.StartGatewayBinary(b, "measured", bin, env)
	} else {
		gw = faulttest.StartGateway(b, "measured", env)
	}
	url, pid := gw.URL, gw.Pid()
	client := &http.Client{Timeout: timeout}
	if id := seedLongPosts(b, client, url); id != "1" {
		b.Fatalf("the seeded user is %s; the aliased-timelines class reads user 1", id)
	}
	classes := append(hostile.Classes(),
		// Sizes the gateway before the limits answers within minutes.
		hostile.Class{Name: "exponential-fragments-16", Doc: hostile.ExponentialFragments(16)},
		hostile.Class{Name: "exponential-fragments-20", Doc: hostile.ExponentialFragments(20)},
		hostile.Class{Name: "exponential-fragments-24", Doc: hostile.ExponentialFragments(24)},
		hostile.Class{Name: "repeated-field-2k", Doc: hostile.RepeatedField(2000)},
		hostile.Class{Name: "repeated-field-5k", Doc: hostile.RepeatedField(5000)},
	)
	for _, c := range classes {
		if only := os.Getenv("HOSTILE_ONLY"); only != "" && !slices.Contains(strings.Split(only, ","), c.Name) {
			continue
		}
		b.Run(c.Name, func(b *testing.B) {
			var cpu time.Duration
			var peak int64
			var last gqlResult
			for range b.N {
				if err := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0); err != nil {
					b.Fatalf("reset the peak: %v", err)
				}
				before := rssBytes(b, pid, "VmRSS")
				c0 := cpuTime(b, pid)
				last = postQuery(client, url, "", c.Doc, nil)
				if last.err != nil {
					b.Fatalf("%s: %v", c.Name, last.err)
				}
				cpu += cpuTime(b, pid) - c0
				peak = max(peak, rssBytes(b, pid, "VmHWM")-before)
			}
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(peak)/(1<<20), "peak-MiB")
			if b.N > 1 || os.Getenv("GATEWAY_BIN") != "" {
				b.Logf("%s: status %d, code %q, %d errors, %d bytes", c.Name, last.status, last.code, last.errors, last.bytes)
			}
		})
	}
}

// cpuTime is the user and system time process pid has used (in clock
// ticks of 10ms).
func cpuTime(t testing.TB, pid int) time.Duration {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	// The fields after the command name, which is in parentheses.
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}
