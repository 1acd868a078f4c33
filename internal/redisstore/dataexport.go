package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// ExportConfig bounds data exports.
type ExportConfig struct {
	// Every is the least time between two exports of an account.
	Every time.Duration
	// Stale is how long an export may stay PENDING before it counts as
	// FAILED (its job dead-lettered, or was lost) and a new one may be
	// asked for.
	Stale time.Duration
	// Keep is how long a READY archive is served.
	Keep time.Duration
}

// DefaultExports are the bounds of data exports: one a day, served for
// seven days.
func DefaultExports() ExportConfig {
	return ExportConfig{Every: 24 * time.Hour, Stale: time.Hour, Keep: 7 * 24 * time.Hour}
}

// ExportService keeps data exports: each account's latest export
// (Keys.Export), the queue of exports to prepare, and the reads its
// workers page through (export_read.go).
//
// A request is two single-slot steps: export_request.lua writes the
// PENDING record in the user's slot, then the job goes on the export
// queue ({export}); when queueing fails the record is settled FAILED,
// which a new request may replace at once. A job runs again after a crash
// (at least once): its archive is written whole under the user's one
// archive key, and export_settle.lua settles only the export it was for.
type ExportService struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
	cfg  ExportConfig
	// queueLen bounds the export stream (about; XADD MAXLEN ~).
	queueLen int64

	accounts *AccountService
	posts    *PostService
	eng      *EngagementService
	notes    *NotificationService
	cur      *CurationService
}

// NewExportService returns the export service of st.
func NewExportService(st *Store, cfg ExportConfig) *ExportService {
	return &ExportService{rdb: st.DB.rdb, keys: st.DB.keys, set: st.DB.set, cfg: cfg, queueLen: 100000,
		accounts: st.AccountService, posts: st.PostService, eng: st.EngagementService,
		notes: st.NotificationService, cur: st.CurationService}
}

// ExportConfig returns the service's bounds.
func (s *ExportService) ExportConfig() ExportConfig { return s.cfg }

// RequestExport starts a new export of userID's data and returns it,
// PENDING: BAD_USER_INPUT, with nothing changed, while one is being
// prepared or when the latest was asked for less than Every ago.
func (s *ExportService) RequestExport(ctx context.Context, userID string) (*social.DataExport, error) {
	var b [12]byte
	_, _ = rand.Read(b[:])
	e := &social.DataExport{ID: hex.EncodeToString(b[:]), UserID: userID, Status: social.ExportPending,
		CreatedAt: s.set.now().UTC().Truncate(time.Millisecond)}
	res, err := exportRequestScript.Run(ctx, s.rdb, []string{s.keys.Export(userID)}, e.ID, e.CreatedAt.UnixMilli(),
		s.cfg.Every.Milliseconds(), s.cfg.Stale.Milliseconds(), s.ttl()).Text()
	if err != nil {
		return nil, fmt.Errorf("request the export of %s: %w", userID, err)
	}
	switch res {
	case "BUSY":
		return nil, social.Errorf(social.BadUserInput, "an export of the account is being prepared")
	case "DAY":
		return nil, social.Errorf(social.BadUserInput, "one export a day: the latest was asked for less than %s ago", s.cfg.Every)
	}
	err = s.rdb.XAdd(ctx, &redis.XAddArgs{Stream: s.keys.ExportQueue(), MaxLen: s.queueLen, Approx: true,
		Values: map[string]any{"user": userID, "id": e.ID}}).Err()
	if err != nil {
		// Settled FAILED, the export may be asked for again at once.
		_ = s.SettleExport(context.WithoutCancel(ctx), userID, e.ID, 0)
		return nil, fmt.Errorf("queue the export of %s: %w", userID, err)
	}
	return e, nil
}

// Served is the longest an archive is served after its upload began: its
// Keep from when its job settled, and the job's longest run (Stale)
// before that, since a store may date an object by the start of its
// upload. The media sweep deletes archives older than that.
func (c ExportConfig) Served() time.Duration { return c.Keep + c.Stale }

// ttl is the export record's TTL (ms): it outlives its archive's Keep,
// so a record is never dropped while its archive is served.
func (s *ExportService) ttl() int64 { return (s.cfg.Keep + s.cfg.Every + s.cfg.Stale).Milliseconds() }

// LatestExport returns userID's latest export, nil when there is none or
// its archive is no longer served. One that stayed PENDING longer than
// Stale reads as FAILED.
func (s *ExportService) LatestExport(ctx context.Context, userID string) (*social.DataExport, error) {
	vals, err := s.rdb.HMGet(ctx, s.keys.Export(userID), exportRecord.names(nil)...).Result()
	if err != nil {
		return nil, fmt.Errorf("load the export of %s: %w", userID, err)
	}
	if vals[0] == nil {
		return nil, nil
	}
	e := &social.DataExport{UserID: userID}
	exportRecord.decode(e, vals)
	now := s.set.now()
	switch {
	case e.Status == social.ExportPending && now.Sub(e.CreatedAt) >= s.cfg.Stale:
		e.Status = social.ExportFailed
	case e.Status == social.ExportReady && !now.Before(e.Until):
		return nil, nil
	}
	return e, nil
}

// SettleExport ends the job of userID's export id: READY with an
// archive of bytes, served from now for Keep, or FAILED when bytes is 0.
// It changes nothing unless that export is PENDING, and reports whether
// it did.
func (s *ExportService) SettleExport(ctx context.Context, userID, id string, bytes int64) error {
	st, until := social.ExportFailed, int64(0)
	if bytes > 0 {
		st, until = social.ExportReady, s.set.now().Add(s.cfg.Keep).UnixMilli()
	}
	err := exportSettleScript.Run(ctx, s.rdb, []string{s.keys.Export(userID)}, id, string(st),
		strconv.FormatInt(bytes, 10), until, s.ttl()).Err()
	if err != nil {
		return fmt.Errorf("settle the export of %s: %w", userID, err)
	}
	return nil
}

// ExportQueue names the export queue for its workers.
func (s *ExportService) ExportQueue() (stream, dead, alive string) {
	return s.keys.ExportQueue(), s.keys.ExportDead(), s.keys.ExportAlive()
}
