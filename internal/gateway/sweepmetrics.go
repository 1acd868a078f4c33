package gateway

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/socialgw/gateway/internal/mediastore"
)

// counters returns a function registering a counter read from one field
// of stats() at every scrape.
func counters[S any](reg prometheus.Registerer, stats func() S) func(name, help string, v func(S) int64) {
	return func(name, help string, v func(S) int64) {
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(v(stats())) }))
	}
}

// RegisterMediaSweep exports the counters of the media sweep running in
// the gateway's process with its fan-out worker; nil: no sweep.
func RegisterMediaSweep(reg prometheus.Registerer, sw *mediastore.Sweeper) {
	if sw == nil {
		return
	}
	counter := counters(reg, sw.Stats)
	counter("gateway_media_sweep_listed_total", "Media files the sweep listed.", func(s mediastore.SweepStats) int64 { return s.Listed })
	counter("gateway_media_sweep_deleted_total", "Media files no post names, deleted by the sweep.", func(s mediastore.SweepStats) int64 { return s.Deleted })
	counter("gateway_media_sweep_undecided_total", "Old media files kept because their author made too many posts since to tell.", func(s mediastore.SweepStats) int64 { return s.Undecided })
	counter("gateway_media_sweep_unstamped_total", "Old media files kept because their key names no post.", func(s mediastore.SweepStats) int64 { return s.Unstamped })
	counter("gateway_media_sweep_exports_expired_total", "Data export archives no address serves any more, deleted by the sweep.", func(s mediastore.SweepStats) int64 { return s.Expired })
	counter("gateway_media_sweep_failures_total", "Media sweep passes that failed (the next pass tries again).", func(s mediastore.SweepStats) int64 { return s.Failed })
}
