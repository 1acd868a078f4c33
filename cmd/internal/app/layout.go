package app

import (
	"context"
	"log/slog"

	"github.com/socialgw/gateway/internal/redisstore"
)

// MigrateProfiles moves profile hashes written by an earlier version to
// their own prefix (redisstore.DB.MigrateProfiles) before the gateway
// serves; a database already moved costs one read.
func MigrateProfiles(ctx context.Context, store *redisstore.DB, log *slog.Logger) {
	beforeServing(ctx, log, "profile hashes moved to their prefix", "moved", store.MigrateProfiles)
}

// MigrateAuthorFlags moves the locked and suspended accounts an earlier
// version kept in sets into the author flags that reads check
// (redisstore.DB.MigrateAuthorFlags) before the gateway or worker serves;
// with nothing left to move it costs three reads.
func MigrateAuthorFlags(ctx context.Context, store *redisstore.DB, log *slog.Logger) {
	beforeServing(ctx, log, "locked and suspended accounts moved to the author flags", "moved", store.MigrateAuthorFlags)
}

// BuildUserSearch indexes for user search the names of a database written
// before it existed (redisstore.UserSearchService.BuildUserSearch); a
// database already indexed costs one read.
func BuildUserSearch(ctx context.Context, search *redisstore.UserSearchService, log *slog.Logger) {
	beforeServing(ctx, log, "names indexed for user search", "indexed", search.BuildUserSearch)
}

// beforeServing runs one change of the data layout at once, logging what
// it did (done, with the count as attr). When Redis does not answer yet,
// it is tried again every second in the background, so a gateway still
// starts with Redis down.
func beforeServing[N int | int64](ctx context.Context, log *slog.Logger, done, attr string, run func(context.Context) (N, error)) {
	try := func() bool {
		n, err := run(ctx)
		if err != nil {
			log.Warn("not done yet: "+done, "err", err, attr, n)
			return false
		}
		if n > 0 {
			log.Info(done, attr, n)
		}
		return true
	}
	if !try() {
		go everySecond(ctx, try)
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
