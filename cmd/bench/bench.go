package main

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gqlguard"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisproc"
	"github.com/socialgw/gateway/internal/redisstats"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/seed"
	"github.com/socialgw/gateway/internal/social"
)

// Bench is one run: a Redis with the hook counting its traffic, the main
// data set, its readers and the gateway serving them.
type Bench struct {
	cfg    *Config
	logf   func(string, ...any)
	server *redisproc.Server // nil with --redis-url
	rdb    redis.UniversalClient
	hook   *redisstats.Hook
	gw     *gateway.Gateway
	store  *redisstore.Store
	data   *seed.Data
	reused bool
	authn  *auth.Service

	closers []func()
}

// newBench connects to (or starts) Redis and installs the hook.
func newBench(ctx context.Context, cfg *Config, logf func(string, ...any)) (*Bench, error) {
	b := &Bench{cfg: cfg, logf: logf, hook: redisstats.NewHook(nil)}
	url := cfg.RedisURL
	if url == "" && cfg.Cluster {
		c, err := redisproc.StartCluster(3, 1)
		if err != nil {
			return nil, err
		}
		b.closers = append(b.closers, c.Stop)
		url = c.URL()
		logf("bench: started a Redis Cluster of three masters with a replica each on %v", c.Addrs())
	}
	if url == "" {
		srv, err := redisproc.Start()
		if err != nil {
			return nil, err
		}
		b.server = srv
		b.closers = append(b.closers, srv.Stop)
		url = srv.URL()
		logf("bench: started redis-server on %s", srv.Addr)
	}
	rdb, err := redisstore.Connect(url, cfg.Cluster)
	if err != nil {
		b.Close()
		return nil, err
	}
	b.closers = append(b.closers, func() { _ = rdb.Close() })
	if err := rdb.Ping(ctx).Err(); err != nil {
		b.Close()
		return nil, fmt.Errorf("redis at %s: %w", url, err)
	}
	b.rdb = rdb
	b.hook.Install(rdb)
	rdb.AddHook(flightRecorder{})
	b.gw, err = newGateway(rdb, cfg.Prefix, cfg.Shards)
	if err != nil {
		b.Close()
		return nil, err
	}
	b.closers = append(b.closers, b.gw.Close)
	b.store, b.authn = b.gw.Store, b.gw.Auth
	return b, nil
}

// Close stops what the run started, in reverse order.
func (b *Bench) Close() {
	for i := len(b.closers) - 1; i >= 0; i-- {
		b.closers[i]()
	}
	b.closers = nil
}

// newGateway wires the gateway as cmd/gateway does, with a random token
// secret and the default timeline configuration.
func newGateway(rdb redis.UniversalClient, prefix string, shards int) (*gateway.Gateway, error) {
	secret := make([]byte, 32)
	if _, err := rand.Read(secret); err != nil {
		return nil, err
	}
	feed := redisstore.DefaultFeed()
	feed.FanoutShards = shards
	return gateway.New(rdb, gateway.Config{
		Prefix: prefix,
		Feed:   feed,
		Tokens: auth.TokenOptions{
			Method: "HS256", Secret: secret, Issuer: "socialgw", Audience: "socialgw-api", TTL: time.Hour,
		},
		RefreshTTL:          time.Hour,
		PasswordConcurrency: 1,
		GraphQL:             gateway.QueryOptions{MaxBodyBytes: 1 << 20, Limits: gqlguard.DefaultLimits(20000), Loaders: loader.DefaultConfig()},
		ProfileCache:        redisstore.DefaultProfileCache,
		PostCache:           redisstore.DefaultPostCache,
	})
}

// seedMain seeds the main data set, or loads it with --reuse.
func (b *Bench) seedMain(ctx context.Context) error {
	c := b.cfg
	sc := seed.Config{Users: c.Users, Posts: c.Posts, Seed: c.Seed, Concurrency: c.SeedConcurrency, Log: b.logf}
	if c.Reuse {
		d, err := seed.Load(ctx, b.rdb, c.Prefix)
		switch {
		case err == nil && d.Config.Users == c.Users && d.Config.Posts == c.Posts && d.Config.Seed == c.Seed:
			b.logf("bench: reusing the data set under %q", c.Prefix)
			b.data, b.reused = d, true
			// A data set seeded by an earlier layout has its profiles
			// under their earlier name.
			_, err := b.store.MigrateProfiles(ctx)
			return err
		case err == nil:
			b.logf("bench: the data set under %q is %d users, %d posts, seed %d: seeding again",
				c.Prefix, d.Config.Users, d.Config.Posts, d.Config.Seed)
		case errors.Is(err, seed.ErrNoData):
			b.logf("bench: no data set under %q yet: seeding", c.Prefix)
		default:
			return err
		}
	}
	if err := seed.Clear(ctx, b.rdb, c.Prefix); err != nil {
		return err
	}
	d, err := seed.Run(ctx, b.store, sc)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	b.data = d
	return seed.Save(ctx, b.rdb, c.Prefix, d)
}

// reader is a user the read measurements act as.
type reader struct {
	id, token string
}

// readers opens sessions for up to n readers with non-empty home
// timelines. Their first read (which also marks them active) happens
// here, outside the measurements.
func (b *Bench) readers(ctx context.Context, n int) ([]reader, error) {
	var out []reader
	for _, u := range b.data.Readers(2*n, 5) {
		if len(out) == n {
			break
		}
		id := b.data.UserIDs[u]
		page, err := b.store.HomePage(ctx, id, social.PageRequest{First: 20}, readplan.PageWants{})
		if err != nil {
			return nil, err
		}
		if len(page.Posts.Items) == 0 {
			continue
		}
		res, err := b.authn.StartSession(ctx, &social.User{ID: id, Name: seed.UserName(u)})
		if err != nil {
			return nil, err
		}
		out = append(out, reader{id: id, token: res.AccessToken})
	}
	if len(out) == 0 {
		return nil, errors.New("no reader has a non-empty home timeline")
	}
	return out, nil
}

// serve starts the gateway (/query) on a loopback listener and returns its
// base URL.
func (b *Bench) serve() (string, error) {
	mux := http.NewServeMux()
	mux.Handle("/query", b.gw.Query)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	b.closers = append(b.closers, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	})
	return "http://" + l.Addr().String(), nil
}

// Run measures what --parts asks for and returns the report.
func (b *Bench) Run(ctx context.Context) (*Report, error) {
	start := time.Now()
	rep := &Report{Config: b.cfg, Machine: machine(ctx, b.rdb)}
	if b.cfg.Parts["read"] || b.cfg.Parts["cap"] || b.cfg.Parts["costs"] {
		if err := b.seedMain(ctx); err != nil {
			return nil, err
		}
		rep.Data, rep.Reused = b.data, b.reused
		rep.HomeCap = b.store.Feed().HomeCap
	}
	if b.cfg.Parts["read"] {
		r, err := b.measureReads(ctx)
		if err != nil {
			return nil, fmt.Errorf("read path: %w", err)
		}
		rep.Reads = r
	}
	if b.cfg.Parts["cap"] {
		r, err := b.measureEntryBytes(ctx)
		if err != nil {
			return nil, fmt.Errorf("bytes per home entry: %w", err)
		}
		rep.Entry = r
		m, err := b.measureEntityBytes(ctx)
		if err != nil {
			return nil, fmt.Errorf("bytes per entity: %w", err)
		}
		rep.Entities = m
	}
	if b.cfg.Parts["fanout"] {
		r, err := b.measureFanout(ctx)
		if err != nil {
			return nil, fmt.Errorf("fan-out: %w", err)
		}
		rep.Fanout = r
	}
	if b.cfg.Parts["modes"] {
		r, err := b.measureModes(ctx)
		if err != nil {
			return nil, fmt.Errorf("fan-out modes: %w", err)
		}
		rep.Modes = r
	}
	if b.cfg.Parts["costs"] {
		r, err := b.measureCosts(ctx)
		if err != nil {
			return nil, fmt.Errorf("read-path costs: %w", err)
		}
		rep.Costs = r
	}
	rep.Elapsed = time.Since(start)
	rep.Machine.LoadAfter = loadAvg()
	return rep, nil
}

// counts is a snapshot of the hook's totals.
type counts struct{ roundTrips, commands int64 }

func (b *Bench) counts() counts {
	return counts{b.hook.Total.RoundTrips(), b.hook.Total.Commands()}
}

func (c counts) since(o counts) counts {
	return counts{c.roundTrips - o.roundTrips, c.commands - o.commands}
}

func (c counts) plus(o counts) counts {
	return counts{c.roundTrips + o.roundTrips, c.commands + o.commands}
}
