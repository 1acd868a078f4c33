package redisstore

import (
	"log/slog"
	"time"

	"github.com/socialgw/gateway/internal/rcache"
	"github.com/socialgw/gateway/internal/social"
)

// ProfileCache configures the local cache of users' profiles: the hashes
// Keys.User names (name, e-mail, bio, creation time), which every page
// reads for its authors. Redis announces each write of one to every
// gateway (rcache.Tracker, broadcast tracking of Keys.ProfilePrefix), so
// an entry is dropped when its profile changes; MaxAge bounds how long an
// entry is served even if an announcement were lost without the tracking
// connection noticing. Nothing that decides what a reader may see
// (blocks, mutes, audiences, follows) and no counter or like is cached:
// those are read from Redis for every page.
type ProfileCache struct {
	// Size is the most profiles kept (least recently used go first);
	// 0 turns the cache off.
	Size int
	// MaxAge is the longest an entry is served after it was read.
	MaxAge time.Duration
	// Log receives the tracking's state changes (nil: slog's default).
	Log *slog.Logger
}

// DefaultProfileCache is the cache of a gateway left at its defaults:
// 100 000 profiles, each served for at most a minute.
var DefaultProfileCache = ProfileCache{Size: 100_000, MaxAge: time.Minute}

// CacheProfiles turns the profile cache on (a Size of 0 leaves it off)
// and starts the tracking that keeps it fresh; stop ends the tracking and
// empties the cache. It is meant to be called once, before the store
// serves.
func (s *DB) CacheProfiles(c ProfileCache) (stop func()) {
	if c.Size <= 0 || c.MaxAge <= 0 {
		return func() {}
	}
	s.set.profiles = rcache.New[social.User](c.Size, c.MaxAge)
	t := rcache.StartTracker(s.rdb, s.set.profiles, rcache.TrackerConfig{
		Prefixes: []string{s.keys.ProfilePrefix()}, Log: c.Log})
	return t.Close
}

// ProfileCacheStats returns the profile cache's counters (zero when off).
func (s *DB) ProfileCacheStats() rcache.Stats { return s.set.profiles.Stats() }

// ProfileCacheLive reports whether the profile cache serves entries: on,
// and tracking up on every server.
func (s *DB) ProfileCacheLive() bool { return s.set.profiles.Live() }
