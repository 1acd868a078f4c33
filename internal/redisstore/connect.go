package redisstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// EachServer runs f on every server that holds data: each master of a
// cluster (concurrently, as ForEachMaster does), or the one server.
// Commands about a whole server (DBSIZE, SCAN, FLUSHALL, CLIENT LIST) sent
// through a cluster client reach one node only.
func EachServer(ctx context.Context, rdb redis.UniversalClient, f func(context.Context, redis.UniversalClient) error) error {
	if cc, ok := rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return f(ctx, m) })
	}
	return f(ctx, rdb)
}

// Connect opens a client for a redis:// or rediss:// URL; with cluster set
// the URL is in go-redis's cluster form (several addr= parameters).
func Connect(url string, cluster bool) (redis.UniversalClient, error) {
	if cluster {
		opt, err := redis.ParseClusterURL(url)
		if err != nil {
			return nil, fmt.Errorf("parse cluster url: %w", err)
		}
		opt.ContextTimeoutEnabled = true
		// go-redis reloads the slot map on MOVED/ASK replies and otherwise
		// only every minute; a dead master answers nothing, so without
		// these its slots would be sent to it for up to that minute after
		// its replica took over (measured by TestClusterFailover).
		opt.ClusterStateReloadInterval = clusterReloadEvery
		cc := redis.NewClusterClient(opt)
		cc.AddHook(reloadOnNetError{cc})
		return cc, nil
	}
	opt, err := redis.ParseURL(url)
	if err != nil && strings.Contains(url, "addr=") {
		return nil, fmt.Errorf("%w: REDIS_URL lists several nodes (addr=): set REDIS_CLUSTER=true for a Redis Cluster", ErrTopology)
	}
	if err != nil {
		return nil, fmt.Errorf("parse redis url: %w", err)
	}
	// Request deadlines (REQUEST_TIMEOUT) bound Redis calls too; the
	// read and write timeouts (3 s) bound each network wait.
	opt.ContextTimeoutEnabled = true
	return redis.NewClient(opt), nil
}

// ErrTopology: the server at the URL is not the kind REDIS_CLUSTER says
// (a cluster node used as a single server, or the reverse). Retrying
// cannot help, unlike a server that does not answer yet.
var ErrTopology = errors.New("redis topology does not match REDIS_CLUSTER")

// CheckTopology asks Redis whether it runs in cluster mode and compares
// with cluster. A cluster node used as a single server answers MOVED to
// most keys, and a single server refuses the cluster client's first
// command: both are configuration mistakes, worth stopping at startup.
func CheckTopology(ctx context.Context, rdb redis.UniversalClient, cluster bool) error {
	info, err := rdb.Info(ctx, "cluster").Result()
	switch {
	case err != nil && strings.Contains(err.Error(), "cluster support disabled"):
		return fmt.Errorf("%w: REDIS_CLUSTER=true but the server is not a Redis Cluster node (%v)", ErrTopology, err)
	case err != nil:
		return err
	case strings.Contains(info, "cluster_enabled:1") && !cluster:
		return fmt.Errorf("%w: REDIS_URL names a Redis Cluster node: set REDIS_CLUSTER=true and list the nodes (redis://host1:port1?addr=host2:port2)", ErrTopology)
	case !strings.Contains(info, "cluster_enabled:1") && cluster:
		return fmt.Errorf("%w: REDIS_CLUSTER=true but the server is not a Redis Cluster node", ErrTopology)
	}
	return nil
}

// clusterReloadEvery bounds how stale a cluster client's slot map gets
// without errors: one CLUSTER SLOTS per period per process.
const clusterReloadEvery = 5 * time.Second

// reloadOnNetError asks a cluster client to reload its slot map (at most
// once per 200 ms, in the background) when a command or pipeline fails on
// the network, the sign of a node gone, so the slots of a failed-over
// master move to its promoted replica as soon as the cluster says so.
type reloadOnNetError struct{ cc *redis.ClusterClient }

func (h reloadOnNetError) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h reloadOnNetError) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.check(ctx, err)
		return err
	}
}

func (h reloadOnNetError) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		h.check(ctx, err)
		return err
	}
}

func (h reloadOnNetError) check(ctx context.Context, err error) {
	var ne net.Error
	if err != nil && (errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNREFUSED)) {
		h.cc.ReloadState(ctx)
	}
}
