package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
)

// CPU time, to tell where a page's time goes: the bench process (the
// gateway with its load generator, or the replay client) and Redis share
// the machine's cores, and wall time alone does not say which of them a
// path is waiting for.

// redisCPU returns the CPU time Redis has used (INFO cpu: user + system of
// all its threads), summed over the masters of a cluster, or 0 when it
// cannot tell.
func redisCPU(ctx context.Context, rdb redis.UniversalClient) time.Duration {
	var total float64
	err := eachInfo(ctx, rdb, "cpu", func(info string) { total += infoSum(info, "used_cpu_user", "used_cpu_sys") })
	if err != nil {
		return 0
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
// (total_net_output_bytes of INFO stats), summed over the masters of a
// cluster. Redis 7 counts what a master sends its replicas apart
// (total_net_repl_output_bytes), so replication is not in it.
func redisNetOutput(ctx context.Context, rdb redis.UniversalClient) int64 {
	var total float64
	err := eachInfo(ctx, rdb, "stats", func(info string) { total += infoSum(info, "total_net_output_bytes") })
	if err != nil {
		return 0
	}
	return int64(total)
}

// eachInfo calls f with INFO section of every server that holds data
// (redisstore.EachServer: each master of a cluster), one at a time. A
// cluster client's own INFO reaches one node, whose figures do not
// subtract from another's. Replicas are left out: the figures are for the
// work of requests, and what a replica does is replicate and keep the
// cluster up.
func eachInfo(ctx context.Context, rdb redis.UniversalClient, section string, f func(info string)) error {
	var mu sync.Mutex // EachServer calls on every master at once
	return redisstore.EachServer(ctx, rdb, func(ctx context.Context, c redis.UniversalClient) error {
		info, err := c.Info(ctx, section).Result()
		if err != nil {
			return fmt.Errorf("info %s: %w", section, err)
		}
		mu.Lock()
		defer mu.Unlock()
		f(info)
		return nil
	})
}

// infoSum adds up the numeric fields named of one server's INFO text.
func infoSum(info string, fields ...string) float64 {
	var total float64
	for line := range strings.SplitSeq(info, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if ok && slices.Contains(fields, k) {
			f, _ := strconv.ParseFloat(v, 64)
			total += f
		}
	}
	return total
}
