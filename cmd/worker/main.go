// Command worker runs fan-out workers outside the gateway, to scale fan-out
// on its own: each process joins the consumer group of the fan-out stream
// and delivers posts to home timelines (docs/fanout.md).
//
// It reads the same variables as the gateway for what they share
// (REDIS_URL, REDIS_PREFIX, FANOUT_MODE, CELEBRITY_THRESHOLD, …) and must
// run with the same values. `--help` lists every setting. SIGINT or
// SIGTERM stops it after the jobs it is running finish.
package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"time"

	"github.com/socialgw/gateway/cmd/internal/app"
	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/mediastore"
	"github.com/socialgw/gateway/internal/redisstore"
)

func main() {
	app.Main("worker", func(ctx context.Context) error { return run(ctx, os.Args[1:], os.Getenv, os.Stderr) })
}

func parseConfig(args []string, getenv func(string) string, out io.Writer) (*app.WorkerConfig, error) {
	c := &app.WorkerConfig{}
	if _, err := app.Parse("worker", c.Settings(), args, getenv, out); err != nil {
		return nil, err
	}
	if c.RedisURL == "" {
		return nil, errors.New("REDIS_URL is required")
	}
	if err := c.Common.Check(); err != nil {
		return nil, err
	}
	return c, c.Feed.Finish()
}

// run works until ctx is cancelled, then stops gracefully.
func run(ctx context.Context, args []string, getenv func(string) string, stdout io.Writer) error {
	cfg, err := parseConfig(args, getenv, stdout)
	if err != nil {
		return err
	}
	log, err := cfg.NewLogger(stdout)
	if err != nil {
		return err
	}
	rdb, err := cfg.ConnectRedis(log)
	if err != nil {
		return err
	}
	defer rdb.Close()
	store := redisstore.New(rdb, cfg.RedisPrefix)
	if err := store.SetFeed(cfg.Feed.Store); err != nil {
		return err
	}
	settingsDiffer, err := app.ClaimFeed(ctx, store, cfg.Feed.Reclaim, log)
	if err != nil {
		return err
	}
	var sweeper *mediastore.Sweeper
	if cfg.Media.Configured() {
		files, closeFiles, err := cfg.Media.Open(ctx, log)
		if err != nil {
			return err
		}
		defer closeFiles()
		store.SetFiles(files)
		if sweeper, err = cfg.Media.Sweep.Start(ctx, files, store, log); err != nil {
			return err
		}
	} else {
		log.Warn("no MEDIA_URL or MEDIA_DIR: deleted posts' media files, and files no post names, are left in place")
	}
	w, err := app.NewWorker(rdb, store, cfg.Feed.Worker, log)
	if err != nil {
		return err
	}
	log.Info("fan-out worker started", "mode", cfg.Feed.Store.Mode, "consumer", w.Config().Consumer)
	stopWorker := app.StartWorker(context.WithoutCancel(ctx), w, store, log)
	var stats <-chan time.Time // nil: never
	if cfg.StatsEvery > 0 {
		tick := time.NewTicker(cfg.StatsEvery)
		defer tick.Stop()
		stats = tick.C
	}
	var stopped error
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case stopped = <-settingsDiffer:
			log.Error("stopping", "err", stopped)
			break loop
		case <-stats:
			logStats(ctx, log, w, store, sweeper)
		}
	}
	log.Info("shutting down", "timeout", cfg.ShutdownTimeout)
	stopWorker(cfg.ShutdownTimeout)
	st := w.Stats()
	log.Info("stopped", "processed", st.Processed, "failed", st.Failed, "claimed", st.Claimed, "dead_lettered", st.DeadLettered)
	return stopped
}

// logStats logs the worker's counters, the queue's backlog and the media
// sweep's counters.
func logStats(ctx context.Context, log *slog.Logger, w *fanout.Pool, store *redisstore.Store, sweeper *mediastore.Sweeper) {
	queued, dead, err := fanout.BacklogAll(ctx, store.Client(), store.FanoutQueue())
	st := w.Stats()
	attrs := []any{"processed", st.Processed, "failed", st.Failed, "claimed", st.Claimed,
		"dead_lettered", st.DeadLettered, "queued", queued, "dead_letter_stream", dead}
	attrs = append(attrs, app.SweepAttrs(sweeper)...)
	if err != nil {
		log.Warn("fan-out worker: backlog unknown", append(attrs, "err", err)...)
		return
	}
	log.Info("fan-out worker", attrs...)
}
