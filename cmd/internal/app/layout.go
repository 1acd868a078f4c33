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

// PostIndexer backfills the reader's index
// (redisstore.DB.MigratePostIndexes).
type PostIndexer interface {
	MigratePostIndexes(ctx context.Context) (int64, error)
}

// IndexPosts puts posts written before the reader's index existed into
// it (redisstore.DB.MigratePostIndexes), in the background: pages of
// signed-in readers list such posts once it has passed their author. A
// run cut short resumes where it stopped; once done, a start costs one
// read. When Redis fails meanwhile, it is tried again every second.
func IndexPosts(ctx context.Context, store PostIndexer, log *slog.Logger) {
	everySecondNow(ctx, func() bool {
		n, err := store.MigratePostIndexes(ctx)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("posts not all in the reader's index yet; trying again", "err", err, "indexed", n)
			}
			return false
		}
		if n > 0 {
			log.Info("posts put in the reader's index", "posts", n)
		}
		return true
	})
}

// everySecondNow calls done at once, then as everySecond does.
func everySecondNow(ctx context.Context, done func() bool) {
	if !done() {
		everySecond(ctx, done)
	}
}
