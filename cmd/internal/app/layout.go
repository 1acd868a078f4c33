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
	if try := attempt(ctx, log, done, attr, run); !try() {
		go everySecond(ctx, try)
	}
}

// attempt is one try of run that logs what it did: done with the count
// as attr when it changed something, a warning when it failed (not once
// ctx ended). It reports whether run succeeded.
func attempt[N int | int64](ctx context.Context, log *slog.Logger, done, attr string, run func(context.Context) (N, error)) func() bool {
	return func() bool {
		n, err := run(ctx)
		if err != nil {
			if ctx.Err() == nil {
				log.Warn("not done yet, trying again: "+done, "err", err, attr, n)
			}
			return false
		}
		if n > 0 {
			log.Info(done, attr, n)
		}
		return true
	}
}

// Backfiller fills indexes with what was written before they existed:
// the reader's index of posts (redisstore.DB.MigratePostIndexes) and the
// users' indexes of their likes and comments
// (redisstore.DB.MigrateEngagementIndexes).
type Backfiller interface {
	MigratePostIndexes(ctx context.Context) (int64, error)
	MigrateEngagementIndexes(ctx context.Context) (int64, error)
}

// Backfill runs the backfills of store one after the other, in the
// background of a worker: pages of signed-in readers list older posts
// once the first has passed their author; an account's purge and data
// export find its older likes and comments once the second has passed
// their post. A run cut short resumes where it stopped; once done, a
// start costs one read each. When Redis fails meanwhile, each is tried
// again every second.
func Backfill(ctx context.Context, store Backfiller, log *slog.Logger) {
	backfill(ctx, log, "posts put in the reader's index", "posts", store.MigratePostIndexes)
	backfill(ctx, log, "likes and comments put in their users' indexes", "entries", store.MigrateEngagementIndexes)
}

// backfill runs one backfill until it is done or ctx ends.
func backfill(ctx context.Context, log *slog.Logger, done, attr string, run func(context.Context) (int64, error)) {
	everySecondNow(ctx, attempt(ctx, log, done, attr, run))
}

// everySecondNow calls done at once, then as everySecond does.
func everySecondNow(ctx context.Context, done func() bool) {
	if !done() {
		everySecond(ctx, done)
	}
}
