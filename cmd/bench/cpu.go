package main

import (
	"context"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// CPU time, to tell where a page's time goes: the bench process (the
// gateway with its load generator, or the replay client) and Redis share
// the machine's cores, and wall time alone does not say which of them a
// path is waiting for.

// redisCPU returns the CPU time Redis has used (INFO cpu: user + system of
// all its threads), or 0 when it cannot tell (a cluster: several servers).
func redisCPU(ctx context.Context, rdb redis.UniversalClient) time.Duration {
	if _, ok := rdb.(*redis.Client); !ok {
		return 0
	}
	var total float64
	for _, line := range strings.Split(rdb.Info(ctx, "cpu").Val(), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && (k == "used_cpu_user" || k == "used_cpu_sys") {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return time.Duration(total * float64(time.Second))
}

// processCPU returns the CPU time (user + system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// redisNetOutput returns the bytes Redis has sent to its clients
// (total_net_output_bytes of INFO stats).
func redisNetOutput(ctx context.Context, rdb redis.UniversalClient) int64 {
	for _, line := range strings.Split(rdb.Info(ctx, "stats").Val(), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_net_output_bytes:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}
