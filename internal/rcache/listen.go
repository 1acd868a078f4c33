package rcache

import (
	"context"
	"errors"
	"net"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// invalidateChannel is where Redis sends a RESP2 connection's
// invalidations when tracking redirects to it.
const invalidateChannel = "__redis__:invalidate"

// listen keeps addr's tracking connection up until ctx ends, reconnecting
// with a growing pause; a server that does not know CLIENT TRACKING (the
// embedded development server) leaves the sink off for good.
func (t *Tracker) listen(ctx context.Context, l *listener, addr string, base *redis.Options) {
	defer t.wg.Done()
	pause := 50 * time.Millisecond
	quiet := false // a failure already logged, no success since
	for ctx.Err() == nil {
		up, err := t.session(ctx, l, addr, base)
		t.report(l, addr, false)
		if ctx.Err() != nil {
			return
		}
		if unsupported(err) {
			t.log.Info("client cache off: this Redis has no client tracking", "addr", addr)
			return
		}
		if up {
			pause, quiet = 50*time.Millisecond, false
		}
		if quiet {
			t.log.Debug("client cache: tracking still down", "addr", addr, "err", err)
		} else {
			t.log.Warn("client cache: tracking lost, cache emptied until it is back", "addr", addr, "err", err)
			quiet = true
		}
		select {
		case <-ctx.Done():
		case <-time.After(pause):
		}
		pause = min(2*pause, 2*time.Second)
	}
}

// session runs one tracking connection until it fails.
func (t *Tracker) session(ctx context.Context, l *listener, addr string, base *redis.Options) (up bool, err error) {
	opt := *base
	opt.Protocol = 2 // invalidations arrive as pub/sub messages
	opt.PoolSize, opt.MinIdleConns, opt.MaxIdleConns = 1, 0, 0
	opt.MaxRetries = -1
	opt.DisableIdentity = true
	opt.ClientSideCache, opt.ClientSideCacheConfig = nil, nil
	opt.MaintNotificationsConfig = &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	opt.OnConnect = func(ctx context.Context, cn *redis.Conn) error {
		id, err := cn.ClientID(ctx).Result()
		if err != nil {
			return err
		}
		args := []any{"client", "tracking", "on", "redirect", id, "bcast"}
		for _, p := range t.cfg.Prefixes {
			args = append(args, "prefix", p)
		}
		return cn.Do(ctx, args...).Err()
	}
	c := redis.NewClient(&opt)
	defer c.Close()
	ps := c.Subscribe(ctx, invalidateChannel)
	defer ps.Close()
	pinged := false
	for {
		msg, err := ps.ReceiveTimeout(ctx, t.cfg.Heartbeat)
		switch m := msg.(type) {
		case *redis.Subscription:
			if m.Channel == invalidateChannel && m.Kind == "subscribe" {
				t.report(l, addr, true)
				up = true
			}
		case *redis.Message:
			t.sink.Invalidate(m.PayloadSlice...)
		case *redis.Pong:
			pinged = false
		}
		switch {
		case err == nil:
		case timeout(err) && !pinged && ctx.Err() == nil:
			if err := ps.Ping(ctx); err != nil {
				return up, err
			}
			pinged = true
		default:
			// A broken or silent connection, or FLUSHALL/FLUSHDB (an
			// invalidation of nil keys, which go-redis refuses to parse):
			// all the same, start again from an empty cache.
			return up, err
		}
	}
}

func timeout(err error) bool {
	var ne net.Error
	return errors.Is(err, os.ErrDeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}

// unsupported reports an error that retrying cannot mend: the server does
// not know a command tracking needs.
func unsupported(err error) bool {
	if err == nil {
		return false
	}
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "unknown command") || strings.Contains(s, "unknown subcommand")
}
