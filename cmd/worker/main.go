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
	app.Main("worker", false, func(ctx context.Context, args []string) error { return run(ctx, args, os.Getenv, os.Stderr) })
}

func parseConfig(args []string, getenv func(string) string, out io.Writer) (*app.WorkerConfig, error) {
	return app.ParseWorker(args, getenv, out)
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
	rdb, err := cfg.ConnectRedis(ctx, log)
	if err != nil {
		return err
	}
	defer rdb.Close()
	// The worker runs the fan-out service (and the media sweep's post
	// reads); the settings work on the shared value, the sweep on the
	// services that own the writes it finishes.
	store := redisstore.New(rdb, cfg.RedisPrefix)
	db, jobs := store.DB, store.FanoutService
	if err := db.SetFeed(cfg.Feed.Store); err != nil {
		return err
	}
	if err := cfg.Feed.AdoptThreshold(ctx, db, log); err != nil {
		return err
	}
	// Its jobs read the author flags (a locked author's posts in fan-out
	// and tag indexes).
	app.MigrateAuthorFlags(ctx, db, log)
	settingsDiffer, err := app.ClaimFeed(ctx, db, cfg.Feed.Reclaim, log)
	if err != nil {
		return err
	}
	sweeper, stopFiles, err := startFiles(ctx, cfg, store, log)
	if err != nil {
		return err
	}
	defer stopFiles(cfg.ShutdownTimeout) // last, when run returns
	w, err := app.NewWorker(rdb, jobs, cfg.Feed.Worker, log)
	if err != nil {
		return err
	}
	log.Info("fan-out worker started", "mode", cfg.Feed.Store.Mode, "consumer", w.Config().Consumer)
	stopWorker := app.StartWorker(context.WithoutCancel(ctx), w, store, log)
	stopMail, err := startMail(ctx, cfg, store, log)
	if err != nil {
		stopWorker(0)
		return err
	}
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
	stopMail(cfg.ShutdownTimeout)
	st := w.Stats()
	log.Info("stopped", "processed", st.Processed, "failed", st.Failed, "claimed", st.Claimed, "dead_lettered", st.DeadLettered)
	return stopped
}

// logStats logs the worker's counters, the queue's backlog and the media
// sweep's counters.
func logStats(ctx context.Context, log *slog.Logger, w *fanout.Pool, jobs *redisstore.Store, sweeper *mediastore.Sweeper) {
	queued, dead, err := fanout.BacklogAll(ctx, jobs.Client(), jobs.FanoutQueue())
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

// startFiles opens the media bucket, when one is configured, and starts
// what works on it: the sweep of files no post names and the export
// worker. stop ends the export worker and closes the bucket.
func startFiles(ctx context.Context, cfg *app.WorkerConfig, store *redisstore.Store, log *slog.Logger) (sweeper *mediastore.Sweeper, stop func(time.Duration), err error) {
	if !cfg.Media.Configured() {
		log.Warn("no MEDIA_URL or MEDIA_DIR: deleted posts' media files, and files no post names, are left in place, and no data exports are prepared")
		return nil, func(time.Duration) {}, nil
	}
	files, closeFiles, err := cfg.Media.Open(ctx, log)
	if err != nil {
		return nil, nil, err
	}
	store.SetFiles(files)
	exports := redisstore.DefaultExports()
	if sweeper, err = cfg.Media.Sweep.Start(ctx, files, store.PostService, exports.Served(), log); err != nil {
		closeFiles()
		return nil, nil, err
	}
	stopExports, err := startExports(ctx, store, files, exports, log)
	if err != nil {
		closeFiles()
		return nil, nil, err
	}
	return sweeper, func(timeout time.Duration) { stopExports(timeout); closeFiles() }, nil
}

// startExports runs a worker of the data export queue, which writes the
// archives into files; stop waits for the export it is writing.
func startExports(ctx context.Context, store *redisstore.Store, files *mediastore.Store, cfg redisstore.ExportConfig, log *slog.Logger) (stop func(time.Duration), err error) {
	w, err := app.NewExportWorker(store.Client(), redisstore.NewExportService(store, cfg), files, log)
	if err != nil {
		return nil, err
	}
	log.Info("export worker started", "consumer", w.Config().Consumer)
	return app.StartExports(context.WithoutCancel(ctx), w, log), nil
}

// startMail runs a worker of the mail queue, which sends the account
// e-mails; stop waits for the e-mails it is sending.
func startMail(ctx context.Context, cfg *app.WorkerConfig, store *redisstore.Store, log *slog.Logger) (stop func(time.Duration), err error) {
	mails := redisstore.NewMailService(store.DB)
	w, err := app.NewMailWorker(mails, store.AccountService, cfg.Mail, log)
	if err != nil {
		return nil, err
	}
	log.Info("mail worker started", "consumer", w.Config().Consumer)
	return app.StartMail(context.WithoutCancel(ctx), w, mails, log), nil
}
