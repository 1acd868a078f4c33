// Package redisstats counts what the gateway asks of Redis: round trips (a
// pipeline or transaction is one) and commands. A go-redis hook feeds
// process-wide Prometheus counters and, when the context carries a Counter,
// that counter too, so a test or benchmark can assert the round trips of
// one GraphQL request.
package redisstats

import (
	"context"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

// Counter accumulates the round trips and commands of one unit of work.
type Counter struct {
	roundTrips atomic.Int64
	commands   atomic.Int64
}

// RoundTrips returns the round trips counted so far.
func (c *Counter) RoundTrips() int64 { return c.roundTrips.Load() }

// Commands returns the commands counted so far.
func (c *Counter) Commands() int64 { return c.commands.Load() }

// Reset zeroes the counter.
func (c *Counter) Reset() { c.roundTrips.Store(0); c.commands.Store(0) }

func (c *Counter) add(cmds int) {
	c.roundTrips.Add(1)
	c.commands.Add(int64(cmds))
}

type ctxKey struct{}

// WithCounter returns a context whose Redis traffic is also counted in c.
func WithCounter(ctx context.Context, c *Counter) context.Context {
	return context.WithValue(ctx, ctxKey{}, c)
}

// FromContext returns the counter of ctx, or nil.
func FromContext(ctx context.Context) *Counter {
	c, _ := ctx.Value(ctxKey{}).(*Counter)
	return c
}

// Hook is a go-redis hook that counts round trips and commands.
type Hook struct {
	// Total counts everything that passes the hook (whatever the context).
	Total      Counter
	roundTrips prometheus.Counter
	commands   prometheus.Counter
}

// NewHook returns a hook; with reg set it also exports
// gateway_redis_round_trips_total and gateway_redis_commands_total.
func NewHook(reg prometheus.Registerer) *Hook {
	h := &Hook{
		roundTrips: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gateway_redis_round_trips_total", Help: "Redis round trips (a pipeline counts once).",
		}),
		commands: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "gateway_redis_commands_total", Help: "Redis commands sent.",
		}),
	}
	if reg != nil {
		reg.MustRegister(h.roundTrips, h.commands)
	}
	return h
}

// Install adds the hook to a client.
func (h *Hook) Install(rdb redis.UniversalClient) { rdb.AddHook(h) }

func (h *Hook) count(ctx context.Context, n int) {
	h.Total.add(n)
	h.roundTrips.Inc()
	h.commands.Add(float64(n))
	if c := FromContext(ctx); c != nil {
		c.add(n)
	}
}

// DialHook implements redis.Hook.
func (h *Hook) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook implements redis.Hook.
func (h *Hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.count(ctx, 1)
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook implements redis.Hook.
func (h *Hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.count(ctx, len(cmds))
		return next(ctx, cmds)
	}
}

var _ redis.Hook = (*Hook)(nil)
