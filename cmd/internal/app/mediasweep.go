package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/socialgw/gateway/internal/mediastore"
)

// MediaSweep is how a fan-out worker process sweeps the media bucket for
// files no post names (mediastore.Sweeper).
type MediaSweep struct {
	Grace, Every time.Duration
	Batch        int
}

// minSweepGrace is the least MEDIA_SWEEP_GRACE: far above the longest an
// upload request runs (the server's 30 s read timeout, then the checks).
const minSweepGrace = 5 * time.Minute

// check refuses settings that could delete a file whose post is being
// written.
func (m MediaSweep) check() error {
	if m.Every > 0 && m.Grace < minSweepGrace {
		return fmt.Errorf("MEDIA_SWEEP_GRACE %s is under %s: a file of a post still being made could be deleted", m.Grace, minSweepGrace)
	}
	if m.Batch < 1 {
		return fmt.Errorf("MEDIA_SWEEP_BATCH must be at least 1, not %d", m.Batch)
	}
	return nil
}

// Start runs a Sweeper's pass every m.Every until ctx ends, which also
// deletes the data export archives no address serves any more (served
// at most exportsServed after their upload began:
// redisstore.ExportConfig.Served; 0: archives are left alone), and logs
// what each pass that found something did; nil when sweeping is off.
// Settings that could delete a file whose post is being written are an
// error.
func (m MediaSweep) Start(ctx context.Context, files *mediastore.Store, owners mediastore.Owners, exportsServed time.Duration, log *slog.Logger) (*mediastore.Sweeper, error) {
	if m.Every <= 0 {
		return nil, nil
	}
	if err := m.check(); err != nil {
		return nil, err
	}
	sw := &mediastore.Sweeper{Files: files, Owners: owners, Grace: m.Grace, Batch: m.Batch, ExportKeep: exportsServed}
	go every(ctx, m.Every, func() {
		st, err := sw.Pass(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			log.Warn("media sweep failed; the next sweep tries again", "err", err, "deleted", st.Deleted)
		case st.Deleted > 0 || st.Undecided > 0 || st.Expired > 0:
			log.Info("media sweep", "listed", st.Listed, "deleted", st.Deleted, "undecided", st.Undecided, "exports_expired", st.Expired)
		}
	})
	return sw, nil
}

// SweepAttrs are a sweeper's counters as log attributes.
func SweepAttrs(sw *mediastore.Sweeper) []any {
	if sw == nil {
		return nil
	}
	st := sw.Stats()
	return []any{"media_listed", st.Listed, "media_deleted", st.Deleted, "media_undecided", st.Undecided,
		"media_unstamped", st.Unstamped, "exports_expired", st.Expired, "media_sweeps_failed", st.Failed}
}
