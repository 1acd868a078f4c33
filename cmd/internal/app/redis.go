package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/redisstore"
)

// DefaultRedisWait is REDIS_WAIT in production and for cmd/worker: long
// enough for a Redis started beside the process (a compose file, a pod's
// sidecar, a cluster still electing) to come up, short enough that a
// wrong address ends in a visible crash loop rather than a process that
// serves 503 for ever.
const DefaultRedisWait = 30 * time.Second

// redisProbeTimeout bounds one attempt to reach Redis.
const redisProbeTimeout = 5 * time.Second

// ConnectRedis opens the client the settings name and checks it. A server
// of the wrong kind (REDIS_CLUSTER does not match it) stops the command.
// A server that does not answer is waited for up to RedisWait, then stops
// the command; with RedisWait 0 the command starts anyway (/readyz
// reports 503, go-redis reconnects) and an error naming the address is
// logged, again and again, until Redis answers.
func (c *Common) ConnectRedis(ctx context.Context, log *slog.Logger) (redis.UniversalClient, error) {
	rdb, err := redisstore.Connect(c.RedisURL, c.RedisCluster)
	if err != nil {
		return nil, err
	}
	addr := RedactedURL(c.RedisURL)
	err = waitRedis(ctx, rdb, c.RedisCluster, c.RedisWait, log, addr)
	switch {
	case err == nil:
		return rdb, nil
	case errors.Is(err, redisstore.ErrTopology):
		_ = rdb.Close()
		return nil, err
	case c.RedisWait > 0:
		_ = rdb.Close()
		return nil, fmt.Errorf("redis at %s did not answer within REDIS_WAIT (%s): %w", addr, c.RedisWait, err)
	}
	log.Error("redis does not answer: starting anyway, /readyz answers 503 until it does (REDIS_WAIT bounds the wait instead)",
		"addr", addr, "err", err)
	go watchRedis(ctx, rdb, log, addr)
	return rdb, nil
}

// waitRedis checks the server's topology until it answers, for at most
// wait (one attempt when wait is 0).
func waitRedis(ctx context.Context, rdb redis.UniversalClient, cluster bool, wait time.Duration, log *slog.Logger, addr string) error {
	deadline := time.Now().Add(wait)
	logged := false
	for {
		tctx, cancel := context.WithTimeout(ctx, min(redisProbeTimeout, max(time.Until(deadline), time.Second)))
		err := redisstore.CheckTopology(tctx, rdb, cluster)
		cancel()
		if err == nil || errors.Is(err, redisstore.ErrTopology) || time.Now().After(deadline) {
			return err
		}
		if !logged {
			log.Warn("waiting for redis to answer", "addr", addr, "wait", wait, "err", err)
			logged = true
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// watchRedis pings Redis, with a backoff from one second to ten, and logs
// an error each time it does not answer, until it does or the client is
// closed.
func watchRedis(ctx context.Context, rdb redis.UniversalClient, log *slog.Logger, addr string) {
	down := time.Now()
	for every := time.Second; ; every = min(2*every, 10*time.Second) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(every):
		}
		pctx, cancel := context.WithTimeout(ctx, redisProbeTimeout)
		err := rdb.Ping(pctx).Err()
		cancel()
		switch {
		case err == nil:
			log.Info("redis answers", "addr", addr, "after", time.Since(down).Round(time.Millisecond))
			return
		case errors.Is(err, redis.ErrClosed) || ctx.Err() != nil:
			return
		}
		log.Error("redis does not answer", "addr", addr, "for", time.Since(down).Round(time.Second), "err", err)
	}
}

// RedactedURL is a Redis URL fit for logs: its password is replaced.
func RedactedURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable REDIS_URL)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}
