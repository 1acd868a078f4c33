package gateway

import (
	"context"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"
	"github.com/rs/cors"

	"github.com/socialgw/gateway/graph/readpath"
	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/graphiql"
	"github.com/socialgw/gateway/internal/httpapi"
	"github.com/socialgw/gateway/internal/live"
	"github.com/socialgw/gateway/internal/reqlog"
)

// Handler returns the HTTP mux of the contract — /query, /, /healthz,
// /readyz and /metrics, and /app/ when Config.SPADir is set — wrapped in request ids, access logs, metrics and
// CORS. Its metrics are registered in reg, which /metrics serves.
func (g *Gateway) Handler(log *slog.Logger, reg *prometheus.Registry) http.Handler {
	m := newHTTPMetrics(reg)
	limited := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gateway_rate_limited_total", Help: "Requests or mutation fields refused by a rate limit, by rule.",
	}, []string{"rule"})
	reg.MustRegister(limited)
	g.Limiter.Limited = func(rule string) { limited.WithLabelValues(rule).Inc() }
	registerBacklog(reg, g.Store.Client(), g.Store.FanoutQueue())
	registerFastPath(reg, g.Fast)
	registerProfileCache(reg, g.Store.DB)
	registerPostCache(reg, g.Store.DB)
	if g.Hub != nil {
		registerLive(reg, g.Hub)
	}
	ready := &readiness{ping: g.Store.Ping}

	mux := http.NewServeMux()
	mux.Handle("/query", g.Query)
	mux.Handle(httpapi.MediaPath, g.Media)
	mux.Handle(httpapi.ExportPath, g.ExportFiles)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte("ok\n"))
	})
	mux.Handle("GET /readyz", ready)
	if !g.cfg.MetricsElsewhere {
		mux.Handle("GET /metrics", MetricsHandler(reg))
	}
	if g.cfg.GraphiQL {
		ide := graphiql.Handler("Social gateway", "/query")
		mux.Handle("/", ide)
		mux.Handle(graphiql.AssetPath, ide)
	}
	if g.cfg.SPADir != "" {
		mux.Handle("GET /app/", spa(g.cfg.SPADir))
	}
	var h http.Handler = mux
	if g.cors != nil {
		h = g.cors.Handler(mux)
	}
	return reqlog.Middleware(log, accessLog(m, g.traced(h)))
}

// MetricsHandler serves /metrics from reg, at most one scrape at a time
// (a flood of scrapes waits rather than each gathering every metric).
func MetricsHandler(reg *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{MaxRequestsInFlight: 1})
}

// readiness answers /readyz from a probe of Redis made at most once a
// readyEvery: a flood of probes costs Redis one PING a second, not one
// each.
type readiness struct {
	ping func(context.Context) error

	mu     sync.Mutex
	at     time.Time
	err    error
	probes atomic.Int64 // PINGs sent, for the tests
}

const readyEvery = time.Second

func (r *readiness) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	if time.Since(r.at) >= readyEvery {
		ctx, cancel := context.WithTimeout(req.Context(), time.Second)
		r.err = r.ping(ctx)
		cancel()
		r.at = time.Now()
		r.probes.Add(1)
		if r.err != nil {
			reqlog.Logger(req.Context()).Warn("not ready: redis does not answer", "err", r.err)
		}
	}
	err := r.err
	r.mu.Unlock()
	if err != nil {
		http.Error(w, "redis unavailable", http.StatusServiceUnavailable)
		return
	}
	_, _ = w.Write([]byte("ready\n"))
}

// spa serves the files of dir at /app/, revalidated on every load: it is
// for development, where the build changes under the server.
func spa(dir string) http.Handler {
	files := http.StripPrefix("/app/", http.FileServer(http.Dir(dir)))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		files.ServeHTTP(w, r)
	})
}

// NewRegistry returns a registry for /metrics with the Go runtime and
// process collectors.
func NewRegistry() *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return reg
}

// RegisterWorker exports the counters of a fan-out worker running in the
// gateway's process.
func RegisterWorker(reg prometheus.Registerer, w *fanout.Pool) {
	counter := counters(reg, w.Stats)
	counter("gateway_fanout_jobs_processed_total", "Fan-out jobs handled and acknowledged.", func(s fanout.Stats) int64 { return s.Processed })
	counter("gateway_fanout_job_failures_total", "Fan-out job runs that failed (the job stays pending and is retried).", func(s fanout.Stats) int64 { return s.Failed })
	counter("gateway_fanout_jobs_claimed_total", "Stale pending fan-out jobs taken over from a consumer.", func(s fanout.Stats) int64 { return s.Claimed })
	counter("gateway_fanout_jobs_dead_lettered_total", "Fan-out jobs moved to the dead-letter stream by this worker.", func(s fanout.Stats) int64 { return s.DeadLettered })
}

// registerFastPath exports the timeline fast path's counts: pages it
// rendered, and pages it handed to the ordinary path by reason, so an
// operator sees when a schema or client change made every page take the
// slower path.
func registerFastPath(reg prometheus.Registerer, s *readpath.FastStats) {
	reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "gateway_fastpath_pages_total",
		Help: "Timeline root fields rendered by the fast path.",
	}, func() float64 { return float64(s.Served()) }))
	for r, label := range readpath.FallbackReasons {
		reason := readpath.FallbackReason(r)
		reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name:        "gateway_fastpath_fallbacks_total",
			Help:        "Timeline root fields handed to the ordinary path, by reason.",
			ConstLabels: prometheus.Labels{"reason": label},
		}, func() float64 { return float64(s.Fallbacks(reason)) }))
	}
}

// registerLive exports the live-timeline hub's state and counters.
func registerLive(reg prometheus.Registerer, h *live.Hub) {
	metric := func(name, help string, counter bool, v func(live.Stats) int64) {
		f := func() float64 { return float64(v(h.Stats())) }
		if counter {
			reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help}, f))
		} else {
			reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help}, f))
		}
	}
	metric("gateway_live_subscribers", "Open timelineUpdated subscriptions.", false, func(s live.Stats) int64 { return int64(s.Subscribers) })
	metric("gateway_live_channels", "Sharded pub/sub channels this process is subscribed to in Redis.", false, func(s live.Stats) int64 { return int64(s.Channels) })
	metric("gateway_live_messages_total", "Pub/sub messages handed to subscribers.", true, func(s live.Stats) int64 { return s.Delivered })
	metric("gateway_live_dropped_total", "Subscribers dropped for not keeping up.", true, func(s live.Stats) int64 { return s.Dropped })
	metric("gateway_live_reconnects_total", "Pub/sub connections replaced after a failure.", true, func(s live.Stats) int64 { return s.Reconnects })
	metric("gateway_live_connections", "Pub/sub connections open to Redis (one per master serving a wanted channel).", false, func(s live.Stats) int64 { return int64(s.Conns) })
}

// registerBacklog exports the fan-out queue's length and dead letters, read
// from Redis at scrape time (whichever process runs the workers).
func registerBacklog(reg prometheus.Registerer, rdb redis.UniversalClient, queue []fanout.Queue) {
	reg.MustRegister(&backlogCollector{rdb: rdb, queue: queue})
}

// backlogCollector reads the fan-out backlog once per scrape for both of
// its gauges (-1: Redis did not answer).
type backlogCollector struct {
	rdb   redis.UniversalClient
	queue []fanout.Queue // every shard
}

var (
	backlogDesc = prometheus.NewDesc("gateway_fanout_backlog", "Fan-out jobs queued or pending (-1: Redis did not answer).", nil, nil)
	deadDesc    = prometheus.NewDesc("gateway_fanout_dead_letters", "Jobs in the fan-out dead-letter stream (-1: Redis did not answer).", nil, nil)
)

func (c *backlogCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- backlogDesc
	ch <- deadDesc
}

func (c *backlogCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	q, d, err := fanout.BacklogAll(ctx, c.rdb, c.queue)
	if err != nil {
		q, d = -1, -1
	}
	ch <- prometheus.MustNewConstMetric(backlogDesc, prometheus.GaugeValue, float64(q))
	ch <- prometheus.MustNewConstMetric(deadDesc, prometheus.GaugeValue, float64(d))
}

type httpMetrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newHTTPMetrics(reg prometheus.Registerer) *httpMetrics {
	m := &httpMetrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "gateway_http_requests_total", Help: "HTTP requests by path and status code.",
		}, []string{"path", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "gateway_http_request_duration_seconds", Help: "HTTP request latency by path.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5},
		}, []string{"path"}),
	}
	reg.MustRegister(m.requests, m.duration)
	return m
}

// knownPaths bounds the path label; everything else counts as "other".
var knownPaths = []string{"/query", "/healthz", "/readyz", "/metrics", "/"}

// pathLabel is path, or "other" when it is none of knownPaths.
func pathLabel(path string) string {
	if !slices.Contains(knownPaths, path) {
		return "other"
	}
	return path
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach Flush and Hijack (SSE and
// websockets).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush passes through for SSE.
func (w *statusWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func accessLog(m *httpMetrics, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		path := pathLabel(r.URL.Path)
		d := time.Since(start)
		m.requests.WithLabelValues(path, strconv.Itoa(sw.status)).Inc()
		m.duration.WithLabelValues(path).Observe(d.Seconds())
		reqlog.Logger(r.Context()).Debug("request", "method", r.Method, "path", r.URL.Path, "status", sw.status, "duration", d)
	})
}

// newCORS is the CORS policy for the configured origins (rs/cors). Its
// allow-list also decides cross-origin websocket upgrades (QueryOptions
// OriginAllowed), so a browser gets one answer for both. No credentials:
// the API takes bearer tokens, never cookies.
// With no origins configured there is no cross-origin access at all (an
// empty list would mean "every origin" to rs/cors).
func newCORS(origins []string) *cors.Cors {
	if len(origins) == 0 {
		return nil
	}
	return cors.New(cors.Options{
		AllowedOrigins: origins,
		AllowedMethods: []string{http.MethodGet, http.MethodPost},
		AllowedHeaders: []string{"Authorization", "Content-Type", "Accept", "Idempotency-Key"},
		ExposedHeaders: []string{"Retry-After"},
		MaxAge:         600,
	})
}
