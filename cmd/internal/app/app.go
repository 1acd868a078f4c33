package app

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/redisstore"
)

// Common are the settings every command has: Redis, logging, shutdown.
type Common struct {
	RedisURL        string
	RedisCluster    bool
	RedisPrefix     string
	LogFormat       string
	LogLevel        string
	ShutdownTimeout time.Duration
	// RedisWait bounds how long a command waits at start for Redis to
	// answer (0: it starts at once and keeps trying); redisWait is the
	// setting as given, resolved by Check.
	RedisWait time.Duration
	redisWait string
}

// Settings binds the common settings; redisURLUsage says what an empty
// REDIS_URL means to the command.
func (c *Common) Settings(redisURLUsage string) []Setting {
	return []Setting{
		String(&c.RedisURL, "redis-url", "REDIS_URL", "", redisURLUsage),
		Bool(&c.RedisCluster, "redis-cluster", "REDIS_CLUSTER", "false", "REDIS_URL names a Redis Cluster (redis://host1:port1?addr=host2:port2)"),
		String(&c.RedisPrefix, "redis-prefix", "REDIS_PREFIX", "sg:", "prefix of every Redis key"),
		String(&c.redisWait, "redis-wait", "REDIS_WAIT", "", "how long to wait at start for Redis to answer, then stop with an error; 0 starts at once and logs an error until Redis answers (empty: 30s with PRODUCTION=true and for cmd/worker, 0 for a development gateway)"),
		Duration(&c.ShutdownTimeout, "shutdown-timeout", "SHUTDOWN_TIMEOUT", "15s", "how long in-flight work may finish after SIGINT/SIGTERM"),
		String(&c.LogFormat, "log-format", "LOG_FORMAT", "text", "text or json (the gateway with PRODUCTION=true: json unless set)"),
		String(&c.LogLevel, "log-level", "LOG_LEVEL", "info", "debug, info, warn or error"),
	}
}

// Check validates the common settings; defaultWait is the command's
// REDIS_WAIT when the setting is empty.
func (c *Common) Check(defaultWait time.Duration) error {
	c.RedisWait = defaultWait
	if c.redisWait != "" {
		d, err := time.ParseDuration(c.redisWait)
		if err != nil || d < 0 {
			return fmt.Errorf("REDIS_WAIT %q: want a duration such as 30s, or 0", c.redisWait)
		}
		c.RedisWait = d
	}
	if c.LogFormat != "text" && c.LogFormat != "json" {
		return fmt.Errorf("log format %q: want text or json", c.LogFormat)
	}
	if c.ShutdownTimeout <= 0 {
		return errors.New("shutdown timeout must be positive")
	}
	if c.RedisCluster && c.RedisURL == "" {
		// The embedded Redis is one server; a cluster is named by its
		// nodes' addresses.
		return errors.New("REDIS_CLUSTER=true needs REDIS_URL naming the cluster's nodes (redis://host1:port1?addr=host2:port2)")
	}
	return nil
}

// NewLogger returns the logger the settings ask for, writing to w.
func (c *Common) NewLogger(w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(c.LogLevel)); err != nil {
		return nil, fmt.Errorf("LOG_LEVEL: %w", err)
	}
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: readableDurations}
	var log *slog.Logger
	if c.LogFormat == "json" {
		log = slog.New(slog.NewJSONHandler(w, opts))
	} else {
		log = slog.New(slog.NewTextHandler(w, opts))
	}
	// go-redis logs (pool and reconnection trouble), and the standard
	// library's log package (net/http's server errors among them), go
	// through the same handler, so that with LOG_FORMAT=json every line
	// is JSON.
	redis.SetLogger(redisLogger{log})
	slog.SetDefault(log)
	return log, nil
}

// readableDurations writes durations as "1.5s" rather than as the
// nanoseconds JSON would otherwise give.
func readableDurations(_ []string, a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindDuration {
		a.Value = slog.StringValue(a.Value.Duration().String())
	}
	return a
}

// redisLogger is go-redis's logger over slog.
type redisLogger struct{ log *slog.Logger }

func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, strings.TrimSpace(fmt.Sprintf(format, v...)), "component", "go-redis")
}

// Feed is the configuration of timelines and fan-out (docs/fanout.md).
// The gateway and the worker read it from the same variables, and must
// run with the same values.
type Feed struct {
	Store  redisstore.FeedConfig
	Worker fanout.Config // tuning only: NewWorker names the streams

	mode         string
	inactiveDays int
	// Reclaim records this process's timeline settings in Redis over
	// those of the running deployment (redisstore.DB.ClaimFeed).
	Reclaim bool
	// ExplicitThreshold is set when CELEBRITY_THRESHOLD was given
	// (AdoptThreshold).
	ExplicitThreshold bool
}

// Settings binds the timeline and fan-out settings.
func (f *Feed) Settings() []Setting {
	return []Setting{
		String(&f.mode, "fanout-mode", "FANOUT_MODE", string(redisstore.Hybrid), "how posts reach home timelines: push, pull or hybrid"),
		Int(&f.Store.CelebrityThreshold, "celebrity-threshold", "CELEBRITY_THRESHOLD", fmt.Sprint(redisstore.DefaultCelebrityThreshold), "hybrid: an author with more followers is not fanned out; followers pull their posts when they read"),
		Int(&f.inactiveDays, "inactive-days", "INACTIVE_DAYS", "7", "hybrid: followers who have not read their home timeline for this many days are skipped by fan-out, and rebuilt when they come back"),
		Int(&f.Store.HomeCap, "home-cap", "HOME_CAP", fmt.Sprint(redisstore.DefaultHomeCap), "entries kept per home timeline; older pages are read from the followees' own timelines"),
		Int(&f.Store.Backfill, "follow-backfill", "FOLLOW_BACKFILL", fmt.Sprint(redisstore.DefaultBackfill), "recent posts a follow copies into the follower's home timeline"),
		Int(&f.Store.FanoutBatch, "fanout-batch", "FANOUT_BATCH", fmt.Sprint(redisstore.DefaultFanoutBatch), "followers read per page, and home timelines written per delivery script call, by fan-out"),
		Int(&f.Store.FanoutShards, "fanout-shards", "FANOUT_SHARDS", fmt.Sprint(redisstore.DefaultFanoutShards), "streams the fan-out queue is sharded over (each in its own Redis Cluster slot; every worker reads them all)"),
		Duration(&f.Store.NoteWindow, "notify-window", "NOTIFY_WINDOW", redisstore.DefaultNoteWindow.String(), "likes and reposts of one post, and follows, within this long are one notification"),
		Int(&f.Store.NoteCap, "notify-cap", "NOTIFY_CAP", fmt.Sprint(redisstore.DefaultNoteCap), "notifications kept per user; the least recently active go first"),
		Bool(&f.Reclaim, "feed-reclaim", "FEED_RECLAIM", "false", "record this process's timeline settings in Redis over those the deployment's processes share (to change them: stop the others first); without it, a process whose settings differ refuses to start"),
		Int(&f.Worker.Read, "fanout-read", "FANOUT_READ", fmt.Sprint(fanout.DefaultRead), "fan-out jobs a worker reads at once"),
		Int(&f.Worker.Concurrency, "fanout-concurrency", "FANOUT_CONCURRENCY", fmt.Sprint(fanout.DefaultConcurrency), "fan-out jobs a worker runs at once"),
		Duration(&f.Worker.MinIdle, "fanout-min-idle", "FANOUT_MIN_IDLE", fanout.DefaultMinIdle.String(), "a job pending this long (its worker died, or it failed) is claimed and run again"),
		Int(&f.Worker.MaxDeliveries, "fanout-max-deliveries", "FANOUT_MAX_DELIVERIES", fmt.Sprint(fanout.DefaultMaxDeliveries), "runs of a failing job before it moves to the dead-letter stream"),
		String(&f.Worker.Consumer, "fanout-consumer", "FANOUT_CONSUMER", "", "this worker's name in the consumer group, unique among running workers (empty: host-pid-random)"),
	}
}

// Finish checks the settings and derives the store's configuration.
func (f *Feed) Finish() error {
	if f.inactiveDays < 1 {
		return errors.New("inactive days must be at least 1")
	}
	f.Store.Mode = redisstore.FeedMode(f.mode)
	f.Store.InactiveAfter = time.Duration(f.inactiveDays) * 24 * time.Hour
	if err := f.Store.Validate(); err != nil {
		return err
	}
	switch w := f.Worker; {
	case w.Read < 1 || w.Concurrency < 1:
		return errors.New("fan-out read and concurrency must be at least 1")
	case w.MinIdle <= 0:
		return errors.New("fan-out min idle must be positive")
	case w.MaxDeliveries < 1:
		return errors.New("fan-out max deliveries must be at least 1")
	}
	return nil
}

// WorkerConfig is the configuration of cmd/worker: what it shares with
// the gateway, and how often it logs its counters.
type WorkerConfig struct {
	Common
	Feed       Feed
	StatsEvery time.Duration
	// Media is where deleted posts' files are removed from.
	Media Media
	// Mail is how the worker sends the account e-mails it takes from
	// the mail queue.
	Mail Mail
}

// Settings binds every setting of cmd/worker.
func (c *WorkerConfig) Settings() []Setting {
	list := append(c.Common.Settings("redis:// or rediss:// URL of the gateway's Redis (required)"), c.Feed.Settings()...)
	list = append(list, c.Media.Settings()...)
	list = append(list, c.Mail.Settings()...)
	return append(list, Duration(&c.StatsEvery, "stats-every", "STATS_EVERY", "1m", "how often to log the worker's counters (0: never)"))
}

// ParseWorker reads cmd/worker's settings from args, then getenv, then
// the defaults, and checks them.
func ParseWorker(args []string, getenv func(string) string, out io.Writer) (*WorkerConfig, error) {
	c := &WorkerConfig{}
	explicit, err := Parse("worker", c.Settings(), args, getenv, out)
	if err != nil {
		return nil, err
	}
	c.Feed.ExplicitThreshold = explicit["CELEBRITY_THRESHOLD"]
	if c.RedisURL == "" {
		return nil, errors.New("REDIS_URL is required")
	}
	if err := c.Common.Check(DefaultRedisWait); err != nil {
		return nil, err
	}
	if err := c.Mail.Check(); err != nil {
		return nil, err
	}
	return c, c.Feed.Finish()
}

// NewWorker returns a fan-out worker pool over every shard of the fan-out
// service's job queue.
func NewWorker(rdb redis.UniversalClient, jobs *redisstore.FanoutService, cfg fanout.Config, log *slog.Logger) (*fanout.Pool, error) {
	return fanout.NewPool(rdb, cfg, jobs.FanoutQueue(), jobs.HandleFanoutJob, log)
}

// sweepEvery is how often a worker process runs Store.SweepPending.
const sweepEvery = time.Minute

// StartWorker runs w in the background until ctx ends, and with it a
// periodic sweep of the store's abandoned multi-slot writes
// (Store.SweepPending) and the backfills of indexes (Backfill). The returned stop cancels both and waits, at most
// timeout, for the jobs the worker is running to finish; a job cut off is
// claimed again later by a worker.
func StartWorker(ctx context.Context, w *fanout.Pool, store Sweeper, log *slog.Logger) (stop func(timeout time.Duration)) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil {
			log.Error("fan-out worker failed", "err", err)
		}
	}()
	go sweep(ctx, store, log)
	go refreshTrends(ctx, store, log)
	go Backfill(ctx, store, log)
	return func(timeout time.Duration) {
		cancel()
		select {
		case <-done:
		case <-time.After(timeout):
			log.Warn("fan-out worker still busy at shutdown; its jobs will be claimed again")
		}
	}
}

// Sweeper finishes the store's abandoned multi-slot writes
// (redisstore.Store.SweepPending), refreshes the trend ranking
// (redisstore.TrendService.RefreshTrends) and backfills indexes
// (Backfiller): the periodic work of a worker.
type Sweeper interface {
	SweepPending(ctx context.Context) (int, error)
	RefreshTrends(ctx context.Context) (bool, error)
	Backfiller
}

// sweep runs store.SweepPending every sweepEvery until ctx ends.
func sweep(ctx context.Context, store Sweeper, log *slog.Logger) {
	every(ctx, sweepEvery, func() {
		n, err := store.SweepPending(ctx)
		if err != nil && ctx.Err() == nil {
			log.Warn("sweep of abandoned writes failed; the next sweep tries again", "err", err, "finished", n)
		} else if n > 0 {
			log.Info("finished abandoned writes", "finished", n)
		}
	})
}

// refreshTrends refreshes the trend ranking (TrendService.RefreshTrends)
// at once, then every TrendConfig.Every, until ctx ends; of several
// workers, one counts each time.
func refreshTrends(ctx context.Context, trends Sweeper, log *slog.Logger) {
	refresh := func() {
		if _, err := trends.RefreshTrends(ctx); err != nil && ctx.Err() == nil {
			log.Warn("trend refresh failed; the next one tries again", "err", err)
		}
	}
	refresh()
	every(ctx, redisstore.DefaultTrends().Every, refresh)
}

// every calls f every d, the first time after d, until ctx ends.
func every(ctx context.Context, d time.Duration, f func()) {
	tick := time.NewTicker(d)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		f()
	}
}

// Main runs a command's run function with a context that SIGINT and
// SIGTERM cancel, and exits non-zero with the error it returns (--help is
// not an error). hasProduction says whether the command reads PRODUCTION,
// which makes its logs JSON unless LOG_FORMAT says otherwise.
func Main(name string, hasProduction bool, run func(ctx context.Context, args []string) error) {
	os.Exit(Code(name, hasProduction, os.Args[1:], os.Getenv, os.Stderr, run))
}

// Code is Main's work: it runs run with args and returns the exit code.
// The error that stops the command is its last log line, in the format
// of its other lines (fatalFormat), even when the settings that name
// the format are the ones refused.
func Code(name string, hasProduction bool, args []string, getenv func(string) string, stderr io.Writer,
	run func(ctx context.Context, args []string) error) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, args)
	stop()
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	var h slog.Handler = slog.NewTextHandler(stderr, nil)
	if fatalFormat(args, getenv, hasProduction) == "json" {
		h = slog.NewJSONHandler(stderr, nil)
	}
	slog.New(h).Error(name+" stopped", "err", err)
	return 1
}

// fatalFormat is the log format args and the environment ask for, read
// without the rest of the settings: --log-format or LOG_FORMAT, else json
// when the command reads PRODUCTION and it is true, else text; as
// Common.Check and the commands' finish resolve it.
func fatalFormat(args []string, getenv func(string) string, hasProduction bool) string {
	v, ok := flagValue(args, "log-format", false)
	if !ok {
		v = getenv("LOG_FORMAT")
	}
	if v == "" && hasProduction {
		p, ok := flagValue(args, "production", true)
		if !ok {
			p = getenv("PRODUCTION")
		}
		if b, _ := strconv.ParseBool(p); b {
			v = "json"
		}
	}
	if v != "json" {
		return "text"
	}
	return v
}

// flagValue finds the last value the flag package would give flag name
// in args (-name=v, --name v; a boolean flag alone is "true").
func flagValue(args []string, name string, boolean bool) (v string, found bool) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" || !strings.HasPrefix(a, "-") {
			break
		}
		a = strings.TrimPrefix(strings.TrimPrefix(a, "-"), "-")
		switch {
		case strings.HasPrefix(a, name+"="):
			v, found = strings.TrimPrefix(a, name+"="), true
		case a == name && boolean:
			v, found = "true", true
		case a == name && i+1 < len(args):
			i++
			v, found = args[i], true
		}
	}
	return v, found
}

// ClaimFeed records or checks the timeline settings every gateway and
// worker of a deployment shares (redisstore.DB.ClaimFeed): settings
// that differ are returned at once, and the command stops. When Redis
// does not answer yet (the command starts anyway, as ConnectRedis says),
// the check is tried again every second in the background, and settings
// found to differ then arrive on the channel, for the command to stop on.
func ClaimFeed(ctx context.Context, store *redisstore.DB, reclaim bool, log *slog.Logger) (<-chan error, error) {
	later := make(chan error, 1)
	err := store.ClaimFeed(ctx, reclaim)
	if err == nil || errors.Is(err, redisstore.ErrSettingsDiffer) {
		return later, err
	}
	log.Warn("timeline settings not checked yet: redis does not answer", "err", err)
	go everySecond(ctx, func() bool {
		err := store.ClaimFeed(ctx, reclaim)
		if err == nil {
			log.Info("timeline settings checked")
			return true
		}
		if errors.Is(err, redisstore.ErrSettingsDiffer) {
			later <- err
			return true
		}
		return false
	})
	return later, nil
}

// everySecond calls done every second until it reports true or ctx ends.
func everySecond(ctx context.Context, done func() bool) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	every(ctx, time.Second, func() {
		if done() {
			cancel()
		}
	})
}
