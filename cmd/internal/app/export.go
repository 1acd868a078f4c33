package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/export"
	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/mediastore"
	"github.com/socialgw/gateway/internal/redisstore"
)

// exportGroup is the consumer group of the export queue.
const exportGroup = "export"

// exportJobTimeout bounds one export: an account with many media files
// takes minutes to copy. A job is claimed again only after it, when its
// worker died.
const exportJobTimeout = 30 * time.Minute

// NewExportWorker returns a worker of the data export queue: the fan-out
// queue's worker (internal/fanout) on a stream of its own, one job at a
// time, so that an export, which reads a whole account, never holds up
// the delivery of posts and a process prepares one archive at once.
func NewExportWorker(rdb redis.UniversalClient, exports *redisstore.ExportService, files *mediastore.Store, log *slog.Logger) (*fanout.Worker, error) {
	h := &export.Worker{Source: exports, Records: exports, Files: files, Log: log}
	stream, dead, alive := exports.ExportQueue()
	return fanout.New(rdb, fanout.Config{
		Stream: stream, Dead: dead, Alive: alive, Group: exportGroup,
		Read: 1, Concurrency: 1, JobTimeout: exportJobTimeout, MinIdle: exportJobTimeout + 5*time.Minute,
		MaxDeliveries: 3,
	}, h.Handle, log)
}

// StartExports runs w until ctx ends; stop waits, at most timeout, for
// the export it is writing (one cut off is claimed again later).
func StartExports(ctx context.Context, w *fanout.Worker, log *slog.Logger) (stop func(timeout time.Duration)) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := w.Run(ctx); err != nil {
			log.Error("export worker failed", "err", err)
		}
	}()
	return func(timeout time.Duration) {
		cancel()
		select {
		case <-done:
		case <-time.After(timeout):
			log.Warn("export worker still busy at shutdown; its export will be claimed again")
		}
	}
}
