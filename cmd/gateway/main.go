// Command gateway serves the social network's GraphQL API over Redis.
//
// With no REDIS_URL it starts an embedded in-memory Redis, so that
// `go run ./cmd/gateway` works on a fresh machine; `--help` lists every
// setting.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/socialgw/gateway/cmd/internal/app"
	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/demo"
	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/loader"
	"github.com/socialgw/gateway/internal/mediastore"
	"github.com/socialgw/gateway/internal/redisstats"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/tracing"
	"github.com/socialgw/gateway/internal/trusted"
)

func main() {
	app.Main("gateway", true, func(ctx context.Context, args []string) error { return command(ctx, args, os.Getenv, os.Stderr) })
}

// command runs the subcommand args name (healthcheck, unsuspend), or the
// gateway.
func command(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "healthcheck" {
		return healthcheck(ctx, args[1:])
	}
	if len(args) > 0 && args[0] == "unsuspend" {
		return unsuspend(ctx, args[1:], getenv, stderr)
	}
	return run(ctx, args, getenv, stderr, nil)
}

// run starts the gateway and blocks until ctx is cancelled, then shuts
// down gracefully. ready, when set, is called with the base URL once the
// listener is open.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer, ready func(baseURL string)) error {
	cfg, err := parseConfig(args, getenv, stdout)
	if err != nil {
		return err
	}
	log, err := newLogger(cfg, stdout)
	if err != nil {
		return err
	}

	rdb, closeRedis, err := openRedis(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer closeRedis()
	reg := gateway.NewRegistry()
	redisstats.NewHook(reg).Install(rdb)
	tokens, err := tokenOptions(cfg, log)
	if err != nil {
		return err
	}
	files, closeFiles, err := cfg.Media.Open(ctx, log)
	if err != nil {
		return err
	}
	defer closeFiles()
	docs, err := loadTrusted(cfg, log)
	if err != nil {
		return err
	}
	tracer, stopTracing, err := startTracing(ctx, cfg, log)
	if err != nil {
		return err
	}
	defer stopTracing()
	gw, err := gateway.New(rdb, gatewayConfig(cfg, tokens, files, tracer, docs, log))
	if err != nil {
		return err
	}
	defer gw.Close()
	if cfg.Demo {
		// Before the fan-out worker starts: it creates its consumer group,
		// and the demo writes only into an empty database.
		if err := loadDemo(ctx, cfg, gw, log, stdout); err != nil {
			return err
		}
	}
	if err := cfg.Feed.AdoptThreshold(ctx, gw.Store.DB, log); err != nil {
		return err
	}
	app.MigrateProfiles(ctx, gw.Store.DB, log)
	app.MigrateAuthorFlags(ctx, gw.Store.DB, log)
	app.BuildUserSearch(ctx, gw.Store.UserSearchService, log)
	// After the demo, which writes only into an empty database.
	settingsDiffer, err := app.ClaimFeed(ctx, gw.Store.DB, cfg.Feed.Reclaim, log)
	if err != nil {
		return err
	}
	stopWorker, err := startWorker(ctx, cfg, rdb, gw, files, reg, log)
	if err != nil {
		return err
	}
	// Stops the worker also when serving fails; after a graceful shutdown
	// it is already stopped and this returns at once.
	defer stopWorker(cfg.ShutdownTimeout)
	return serve(ctx, cfg, log, gw, reg, settingsDiffer, stopWorker, ready)
}

// startWorker starts the in-gateway fan-out worker when FANOUT_WORKER is
// on; stop waits for its running jobs, at most the time it is given.
func startWorker(ctx context.Context, cfg *Config, rdb redis.UniversalClient, gw *gateway.Gateway, files *mediastore.Store,
	reg *prometheus.Registry, log *slog.Logger) (stop func(time.Duration), err error) {
	if !cfg.FanoutWorker {
		return func(time.Duration) {}, nil
	}
	w, err := app.NewWorker(rdb, gw.Store.FanoutService, cfg.Feed.Worker, log)
	if err != nil {
		return nil, err
	}
	log.Info("fan-out worker started", "mode", cfg.Feed.Store.Mode, "consumer", w.Config().Consumer)
	gateway.RegisterWorker(reg, w)
	var served time.Duration // exports' (none without a bucket)
	if gw.Exports != nil {
		served = gw.Exports.ExportConfig().Served()
	}
	sweeper, err := cfg.Media.Sweep.Start(ctx, files, gw.Store.PostService, served, log)
	if err != nil {
		return nil, err
	}
	gateway.RegisterMediaSweep(reg, sweeper)
	mw, err := app.NewMailWorker(gw.Mail, gw.Store.AccountService, cfg.Mail, log)
	if err != nil {
		return nil, err
	}
	stopMail := app.StartMail(context.WithoutCancel(ctx), mw, gw.Mail, log)
	stopExports := func(time.Duration) {}
	if gw.Exports != nil && files != nil {
		ew, err := app.NewExportWorker(rdb, gw.Exports, files, log)
		if err != nil {
			return nil, err
		}
		stopExports = app.StartExports(context.WithoutCancel(ctx), ew, log)
	}
	stopFanout := app.StartWorker(context.WithoutCancel(ctx), w, gw.Store, log)
	return func(timeout time.Duration) {
		deadline := time.Now().Add(timeout)
		stopFanout(timeout)
		stopMail(time.Until(deadline))
		stopExports(time.Until(deadline))
	}, nil
}

// serve listens and serves until ctx ends (then shuts down gracefully),
// serving fails, or the timeline settings turn out to differ.
func serve(ctx context.Context, cfg *Config, log *slog.Logger, gw *gateway.Gateway, reg *prometheus.Registry,
	settingsDiffer <-chan error, stopWorker func(time.Duration), ready func(baseURL string)) error {
	ln, err := net.Listen("tcp", cfg.ListenAddr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.ListenAddr, err)
	}
	srv := &http.Server{
		Handler:           gw.Handler(log, reg),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       120 * time.Second,
		// No WriteTimeout: subscriptions (SSE, websockets) stay open.
	}
	// Shutdown waits for open requests, SSE subscriptions among them:
	// ending the subscriptions lets them finish.
	srv.RegisterOnShutdown(gw.Close)
	errc := make(chan error, 2)
	closeMetrics, err := serveMetrics(cfg, reg, log, errc)
	if err != nil {
		return err
	}
	defer closeMetrics()
	base := baseURL(ln.Addr())
	log.Info("listening", "url", base, "graphql", base+"/query")
	if cfg.GraphiQL {
		log.Info("GraphiQL ready: open " + base + "/ in a browser")
	}
	if cfg.SPADir != "" {
		log.Info("single-page app: open "+base+"/app/ in a browser", "dir", cfg.SPADir)
	}
	if ready != nil {
		ready(base)
	}

	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case err := <-settingsDiffer:
		log.Error("stopping", "err", err)
		_ = srv.Close()
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	sctx, cancel := context.WithTimeout(context.Background(), cfg.ShutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		// Cut off what did not finish in time, before Redis closes under it.
		_ = srv.Close()
		return fmt.Errorf("shutdown: %w", err)
	}
	// The fan-out worker finishes the jobs it is running, within what is
	// left of the shutdown timeout; anything cut off is claimed again by a
	// worker later.
	if deadline, ok := sctx.Deadline(); ok {
		stopWorker(time.Until(deadline))
	}
	log.Info("stopped")
	return nil
}

// serveMetrics serves /metrics on METRICS_ADDR when it is set; its
// serving error goes to errc.
func serveMetrics(cfg *Config, reg *prometheus.Registry, log *slog.Logger, errc chan<- error) (closeIt func(), err error) {
	if cfg.MetricsAddr == "" {
		return func() {}, nil
	}
	mln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", gateway.MetricsHandler(reg))
	msrv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	log.Info("metrics served", "url", baseURL(mln.Addr())+"/metrics")
	go func() { errc <- msrv.Serve(mln) }()
	return func() { _ = msrv.Close() }, nil
}

// gatewayConfig is the gateway's configuration from the settings and
// what run opened.
func gatewayConfig(cfg *Config, tokens auth.TokenOptions, files *mediastore.Store, tracer trace.TracerProvider,
	docs *trusted.Documents, log *slog.Logger) gateway.Config {
	return gateway.Config{
		Prefix:              cfg.RedisPrefix,
		Feed:                cfg.Feed.Store,
		Tokens:              tokens,
		RefreshTTL:          cfg.RefreshTokenTTL,
		PasswordConcurrency: cfg.PasswordConcurrency,
		GraphQL: gateway.QueryOptions{
			Introspection:  cfg.Introspection,
			Suggestions:    cfg.Introspection,
			Limits:         cfg.Limits,
			MaxConcurrent:  cfg.MaxConcurrent,
			QueueWait:      cfg.QueueWait,
			RequestTimeout: cfg.RequestTimeout,
			MaxBodyBytes:   cfg.MaxBodyBytes,
			MaxBodyMemory:  cfg.MaxBodyMemory,
			MinBodyRate:    cfg.MinBodyRate,
			Loaders:        loader.DefaultConfig(),
			Sockets:        cfg.Sockets,
			Uploads:        cfg.Uploads,
		},
		Media: gateway.MediaConfig{Files: files, SigningKey: []byte(cfg.MediaSigningKey), URLTTL: cfg.MediaURLTTL,
			BaseURL: cfg.MediaBaseURL},
		GraphiQL: cfg.GraphiQL,
		// Public listeners never serve /metrics in production.
		MetricsElsewhere: cfg.MetricsAddr != "" || cfg.Production,
		CORSOrigins:      cfg.CORSOrigins,
		Abuse:            cfg.Abuse,
		SPADir:           cfg.SPADir,
		Tracer:           tracer,
		Trusted:          docs,
		// The embedded Redis has no client tracking: openRedis says so.
		ProfileCache: redisstore.ProfileCache{Size: map[bool]int{true: cfg.ProfileCache.Size}[cfg.RedisURL != ""],
			MaxAge: cfg.ProfileCache.MaxAge, Log: log},
		PostCache:  cfg.PostCache,
		Accounts:   gateway.AccountConfig{ResetTokenTTL: cfg.Mail.ResetTTL, RequireVerifiedEmail: cfg.RequireVerifiedEmail},
		Moderation: gateway.ModerationConfig{Moderators: cfg.Moderators, Log: log},
		// The embedded Redis has only classic pub/sub.
		Live: gateway.LiveConfig{Classic: cfg.RedisURL == "", Log: log,
			MaxPerUser: cfg.LiveMaxPerUser, MaxSubscriptions: cfg.LiveMaxSubscriptions},
	}
}

// loadDemo fills the (empty) database with the demo network and tells the
// developer how to use it: in text logs a block to copy from, in JSON
// logs one record per demo user.
func loadDemo(ctx context.Context, cfg *Config, gw *gateway.Gateway, log *slog.Logger, out io.Writer) error {
	res, err := demo.Load(ctx, gw.Store, gw.Auth)
	if err != nil {
		return err
	}
	st := res.Stats
	log.Info("demo data loaded", "users", st.Users+2, "follows", st.Follows, "posts", st.Posts,
		"likes", st.Likes, "comments", st.Comments, "restricted_posts", st.OnlyTo+st.NotTo,
		"celebrity", res.Celebrity, "celebrity_followers", res.Followers,
		"celebrity_threshold", gw.Store.Feed().CelebrityThreshold, "duration", res.Duration.Round(time.Millisecond))
	if cfg.LogFormat == "json" {
		for _, s := range []demo.Session{res.Alice, res.Bob} {
			log.Info("demo user", "name", s.Name, "password", s.Password, "user_id", s.UserID,
				"access_token", s.AccessToken, "expires_at", s.ExpiresAt, "refresh_token", s.RefreshToken, "headers", s.Headers)
		}
		return nil
	}
	// A line to paste as it is: slog's text format would quote it.
	fmt.Fprintf(out, "\nDemo users: alice and bob, password %q. Paste one of these lines into GraphiQL's Headers tab\n"+
		"(the access token expires at %s; then log in again, or use the login tab):\n\n  alice  %s\n  bob    %s\n\n",
		demo.Password, res.Alice.ExpiresAt.Local().Format(time.TimeOnly), res.Alice.Headers, res.Bob.Headers)
	return nil
}

// loadTrusted reads TRUSTED_DOCUMENTS (nil when it is not set).
func loadTrusted(cfg *Config, log *slog.Logger) (*trusted.Documents, error) {
	if cfg.TrustedDocuments == "" {
		return nil, nil
	}
	docs, err := trusted.Load(cfg.TrustedDocuments)
	if err != nil {
		return nil, fmt.Errorf("TRUSTED_DOCUMENTS: %w", err)
	}
	log.Info("trusted documents: only the listed documents run", "file", cfg.TrustedDocuments, "documents", docs.Len())
	return docs, nil
}

// startTracing starts the OTLP exporter when TRACE_ENDPOINT is set; stop
// sends the spans still buffered, for at most five seconds.
func startTracing(ctx context.Context, cfg *Config, log *slog.Logger) (trace.TracerProvider, func(), error) {
	if cfg.Tracing.Endpoint == "" {
		return nil, func() {}, nil
	}
	cfg.Tracing.Service = "socialgw-gateway"
	tp, err := tracing.NewProvider(ctx, cfg.Tracing)
	if err != nil {
		return nil, nil, fmt.Errorf("TRACE_ENDPOINT: %w", err)
	}
	log.Info("tracing", "endpoint", cfg.Tracing.Endpoint, "sample_ratio", cfg.Tracing.Ratio)
	return tp, func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			log.Warn("tracing: spans not sent at shutdown", "err", err)
		}
	}, nil
}

func newLogger(cfg *Config, w io.Writer) (*slog.Logger, error) { return cfg.Common.NewLogger(w) }

// openRedis connects to REDIS_URL, or starts the embedded server.
func openRedis(ctx context.Context, cfg *Config, log *slog.Logger) (redis.UniversalClient, func(), error) {
	if cfg.RedisURL == "" {
		m := miniredis.NewMiniRedis()
		if err := m.StartAddr("127.0.0.1:0"); err != nil {
			return nil, nil, fmt.Errorf("start embedded redis: %w", err)
		}
		log.Warn("REDIS_URL is not set: using an embedded in-memory Redis for development; data will not survive a restart, live updates use its classic pub/sub (one process only), and it has no client tracking, so profiles are not cached", "addr", m.Addr())
		stopClock := runClock(m, time.Second)
		rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
		return rdb, func() { stopClock(); _ = rdb.Close(); m.Close() }, nil
	}
	rdb, err := cfg.ConnectRedis(ctx, log)
	if err != nil {
		return nil, nil, err
	}
	return rdb, func() { _ = rdb.Close() }, nil
}

// runClock makes the embedded Redis count its TTLs down with the wall
// clock, every tick: miniredis does so only when told (FastForward). Keys
// then expire as on a real server: sessions, denied tokens, and in hybrid
// mode the home lists of inactive readers (which fan-out then skips).
func runClock(m *miniredis.Miniredis, tick time.Duration) (stop func()) {
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(tick)
		defer t.Stop()
		last := time.Now()
		for {
			select {
			case now := <-t.C:
				m.FastForward(now.Sub(last))
				last = now
			case <-done:
				return
			}
		}
	}()
	return func() { close(done) }
}

// tokenOptions reads the token settings and key files.
func tokenOptions(cfg *Config, log *slog.Logger) (auth.TokenOptions, error) {
	o := auth.TokenOptions{
		Method:   cfg.JWTMethod,
		Secret:   []byte(cfg.JWTSecret),
		Issuer:   cfg.JWTIssuer,
		Audience: cfg.JWTAudience,
		TTL:      cfg.AccessTokenTTL,
	}
	if cfg.JWTMethod == "HS256" && cfg.JWTSecret == "" {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		o.Secret = []byte(base64.RawURLEncoding.EncodeToString(b))
		log.Warn("JWT_SECRET is not set: using a random secret; tokens stop working when the process restarts")
	}
	var err error
	if cfg.JWTPrivateKeyFile != "" {
		if o.PrivateKeyPEM, err = os.ReadFile(cfg.JWTPrivateKeyFile); err != nil {
			return o, fmt.Errorf("read JWT private key: %w", err)
		}
	}
	if cfg.JWTPublicKeyFile != "" {
		if o.PublicKeyPEM, err = os.ReadFile(cfg.JWTPublicKeyFile); err != nil {
			return o, fmt.Errorf("read JWT public key: %w", err)
		}
	}
	return o, nil
}

// baseURL is the URL a browser on this machine can use for addr.
func baseURL(addr net.Addr) string {
	host, port, _ := net.SplitHostPort(addr.String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "localhost"
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	return "http://" + host + ":" + port
}
