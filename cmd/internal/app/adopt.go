package app

import (
	"context"
	"log/slog"

	"github.com/socialgw/gateway/internal/redisstore"
)

// AdoptThreshold makes a process started without an explicit
// CELEBRITY_THRESHOLD take the one the deployment recorded (ClaimFeed),
// and says so: a gateway restarted without --demo on the Redis a demo
// filled, or a worker joining it, then runs with the demo's 75 rather than
// being refused for the default. An explicit value that differs is still
// refused by ClaimFeed. Nothing recorded, or Redis not answering, leaves
// the setting as it is, for ClaimFeed to record or check.
func (f *Feed) AdoptThreshold(ctx context.Context, db *redisstore.DB, log *slog.Logger) error {
	if f.ExplicitThreshold {
		return nil
	}
	recorded, err := db.Client().HGet(ctx, db.Keys().FeedSettings(), "CELEBRITY_THRESHOLD").Int()
	cfg := db.Feed()
	if err != nil || recorded == cfg.CelebrityThreshold {
		return nil
	}
	log.Info("CELEBRITY_THRESHOLD not set: adopting the deployment's recorded value",
		"celebrity_threshold", recorded, "default", cfg.CelebrityThreshold)
	cfg.CelebrityThreshold = recorded
	f.Store.CelebrityThreshold = recorded
	return db.SetFeed(cfg)
}
