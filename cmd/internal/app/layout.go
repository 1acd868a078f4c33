package app

import (
	"context"
	"log/slog"

	"github.com/socialgw/gateway/internal/redisstore"
)

// MigrateProfiles moves profile hashes written by an earlier version to
// their own prefix (redisstore.DB.MigrateProfiles) before the gateway
// serves; a database already moved costs one read. When Redis does not
// answer yet, it is tried again every second in the background.
func MigrateProfiles(ctx context.Context, store *redisstore.DB, log *slog.Logger) {
	migrate := func() bool {
		n, err := store.MigrateProfiles(ctx)
		if err != nil {
			log.Warn("profile hashes not moved to their prefix yet", "err", err, "moved", n)
			return false
		}
		if n > 0 {
			log.Info("profile hashes moved to their prefix", "moved", n)
		}
		return true
	}
	if !migrate() {
		go everySecond(ctx, migrate)
	}
}

// BuildUserSearch indexes for user search the names of a database written
// before it existed (redisstore.UserSearchService.BuildUserSearch); a
// database already indexed costs one read. When Redis does not answer
// yet, it is tried again every second in the background.
func BuildUserSearch(ctx context.Context, search *redisstore.UserSearchService, log *slog.Logger) {
	build := func() bool {
		n, err := search.BuildUserSearch(ctx)
		if err != nil {
			log.Warn("names not indexed for user search yet", "err", err, "indexed", n)
			return false
		}
		if n > 0 {
			log.Info("names indexed for user search", "indexed", n)
		}
		return true
	}
	if !build() {
		go everySecond(ctx, build)
	}
}
