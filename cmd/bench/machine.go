package main

import (
	"bufio"
	"context"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisproc"
)

// Machine describes where a run ran.
type Machine struct {
	NProc, GOMAXPROCS int
	CPU, Kernel, Mem  string
	Go, OSArch        string
	Redis             string // redis_version of the server measured
	RedisBinary       string // redis-server --version of the one on PATH
	// LoadBefore and LoadAfter are /proc/loadavg at the start and the end
	// of the run: other processes on the machine add noise.
	LoadBefore, LoadAfter string
}

// loadAvg returns the 1, 5 and 15 minute load averages.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}

func machine(ctx context.Context, rdb redis.UniversalClient) Machine {
	m := Machine{
		NProc: runtime.NumCPU(), GOMAXPROCS: runtime.GOMAXPROCS(0), Go: runtime.Version(),
		OSArch: runtime.GOOS + "/" + runtime.GOARCH, RedisBinary: redisproc.Version(),
		CPU: procField("/proc/cpuinfo", "model name"), Mem: procField("/proc/meminfo", "MemTotal"),
		LoadBefore: loadAvg(),
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	for _, line := range strings.Split(rdb.Info(ctx, "server").Val(), "\n") {
		if v, ok := strings.CutPrefix(line, "redis_version:"); ok {
			m.Redis = strings.TrimSpace(v)
		}
	}
	return m
}

// procField returns the value of the first "name: value" line of a /proc
// file.
func procField(path, name string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		k, v, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(k) == name {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// gcSetting is the GOGC the runtime applies to this process.
func gcSetting() string {
	m := []metrics.Sample{{Name: "/gc/gogc:percent"}}
	metrics.Read(m)
	if m[0].Value.Kind() != metrics.KindUint64 {
		return "unknown"
	}
	return strconv.FormatUint(m[0].Value.Uint64(), 10)
}
