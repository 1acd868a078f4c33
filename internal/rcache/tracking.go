package rcache

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sink is what a Tracker keeps fresh: a Cache of any value type.
type Sink interface {
	Invalidate(keys ...string)
	Flush(live bool)
	SetLive(live bool)
}

// TrackerConfig tunes a Tracker; zero fields take the defaults.
type TrackerConfig struct {
	// Prefixes are the key prefixes whose writes Redis announces.
	Prefixes []string
	// Heartbeat is how long the invalidation connection may be silent
	// before it is pinged; a ping unanswered for as long again counts
	// as a lost connection (default 1s).
	Heartbeat time.Duration
	// Topology is how often a cluster's masters are listed to follow
	// failovers and new masters (default 1s).
	Topology time.Duration
	// Log receives the tracker's state changes (nil: slog's default).
	Log *slog.Logger
}

// Tracker keeps Redis's broadcast tracking of Prefixes up on every server
// that holds data (each master of a cluster) and hands the invalidations
// to a Sink. Each server gets one connection of its own, in RESP2, that
// turns tracking on for itself (CLIENT TRACKING ON REDIRECT <own id> BCAST
// PREFIX …) and subscribes to __redis__:invalidate: in broadcast mode
// Redis announces every write of a key with a prefix, whichever connection
// read it, so the reads go on over any pooled connection.
//
// The sink is live only while every server's connection is subscribed.
// When one breaks (a restart, a failover, a network fault, a silent
// connection found by the heartbeat) or a cluster's masters change, the
// sink is flushed and stays off until tracking is up again everywhere:
// writes made meanwhile were announced to nobody.
type Tracker struct {
	rdb  redis.UniversalClient
	sink Sink
	cfg  TrackerConfig
	log  *slog.Logger

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu    sync.Mutex
	nodes map[string]*listener // by address
	live  bool                 // every listener up: the sink serves
}

// listener is the tracking connection of one server.
type listener struct {
	stop context.CancelFunc
	up   bool
}

// StartTracker starts tracking for sink over rdb (a *redis.Client or a
// *redis.ClusterClient; another kind leaves the sink off). Close stops it.
func StartTracker(rdb redis.UniversalClient, sink Sink, cfg TrackerConfig) *Tracker {
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = time.Second
	}
	if cfg.Topology <= 0 {
		cfg.Topology = time.Second
	}
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Tracker{rdb: rdb, sink: sink, cfg: cfg, log: log, ctx: ctx, cancel: cancel, nodes: map[string]*listener{}}
	sink.Flush(false)
	t.wg.Add(1)
	go t.follow()
	return t
}

// Close stops tracking and leaves the sink off.
func (t *Tracker) Close() {
	t.cancel()
	t.wg.Wait()
	t.sink.Flush(false)
}

// follow keeps one listener per server, listing a cluster's masters
// every Topology.
func (t *Tracker) follow() {
	defer t.wg.Done()
	tick := time.NewTicker(t.cfg.Topology)
	defer tick.Stop()
	for {
		if servers, err := t.servers(); err == nil {
			t.reconcile(servers)
		}
		select {
		case <-t.ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// servers returns the options of every server that holds data, by address.
func (t *Tracker) servers() (map[string]*redis.Options, error) {
	out := map[string]*redis.Options{}
	switch c := t.rdb.(type) {
	case *redis.Client:
		out[c.Options().Addr] = c.Options()
	case *redis.ClusterClient:
		var mu sync.Mutex
		ctx, cancel := context.WithTimeout(t.ctx, 5*time.Second)
		defer cancel()
		err := c.ForEachMaster(ctx, func(_ context.Context, m *redis.Client) error {
			mu.Lock()
			defer mu.Unlock()
			out[m.Options().Addr] = m.Options()
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// reconcile starts listeners on new servers and stops those on servers
// that are no longer masters; a change flushes the sink, which stays off
// until every listener is up.
func (t *Tracker) reconcile(servers map[string]*redis.Options) {
	t.mu.Lock()
	defer t.mu.Unlock()
	changed := false
	for addr, l := range t.nodes {
		if servers[addr] == nil {
			l.stop()
			delete(t.nodes, addr)
			changed = true
		}
	}
	for addr, opt := range servers {
		if t.nodes[addr] == nil {
			ctx, stop := context.WithCancel(t.ctx)
			l := &listener{stop: stop}
			t.nodes[addr] = l
			t.wg.Add(1)
			go t.listen(ctx, l, addr, opt)
			changed = true
		}
	}
	if changed {
		t.updateLocked(false)
	}
}

// report records whether l is subscribed; l may be stopped already.
func (t *Tracker) report(l *listener, addr string, up bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.nodes[addr] != l {
		return
	}
	l.up = up
	t.updateLocked(!up)
}

// updateLocked turns the sink on when every listener is up; flush first
// forgets everything (tracking was lost somewhere).
func (t *Tracker) updateLocked(flush bool) {
	all := len(t.nodes) > 0
	for _, l := range t.nodes {
		all = all && l.up
	}
	if flush || !all {
		t.sink.Flush(false)
	}
	if all {
		t.sink.SetLive(true)
	}
	// Said when it is so, not when the listeners start: a server without
	// tracking never gets here.
	if all && !t.live {
		t.log.Info("client cache: tracking the servers", "servers", len(t.nodes))
	}
	t.live = all
}
