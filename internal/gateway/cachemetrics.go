package gateway

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/socialgw/gateway/internal/rcache"
	"github.com/socialgw/gateway/internal/redisstore"
)

// registerProfileCache exports the profile cache's counters (all zero
// when it is off).
func registerProfileCache(reg prometheus.Registerer, db *redisstore.DB) {
	counter := counters(reg, db.ProfileCacheStats)
	counter("gateway_profile_cache_hits_total", "Profile reads the local cache served.", func(s rcache.Stats) int64 { return s.Hits })
	counter("gateway_profile_cache_misses_total", "Profile reads the local cache did not hold (or held while off), sent to Redis.", func(s rcache.Stats) int64 { return s.Misses })
	counter("gateway_profile_cache_invalidations_total", "Profile keys invalidated: announced by Redis or written by this process.", func(s rcache.Stats) int64 { return s.Invalidations })
	counter("gateway_profile_cache_flushes_total", "Times the cache was emptied: tracking lost or changed (restart, failover, new master).", func(s rcache.Stats) int64 { return s.Flushes })
	counter("gateway_profile_cache_dropped_total", "Profile replies not kept because their key changed while they were in flight.", func(s rcache.Stats) int64 { return s.Dropped })
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gateway_profile_cache_entries", Help: "Profiles held by the local cache."},
		func() float64 { return float64(db.ProfileCacheStats().Entries) }))
}

// registerPostCache exports the post cache's counters (all zero when it
// is off).
func registerPostCache(reg prometheus.Registerer, db *redisstore.DB) {
	counter := counters(reg, db.PostCacheStats)
	counter("gateway_post_cache_hits_total", "Post reads whose fixed fields the local cache served.", func(s rcache.Stats) int64 { return s.Hits })
	counter("gateway_post_cache_misses_total", "Post reads whose hash was read from Redis in full.", func(s rcache.Stats) int64 { return s.Misses })
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gateway_post_cache_entries", Help: "Posts held by the local cache."},
		func() float64 { return float64(db.PostCacheStats().Entries) }))
}
