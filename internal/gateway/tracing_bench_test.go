package gateway_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"syscall"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// BenchmarkTracing measures what tracing costs a home-timeline page (20
// posts with their authors: the token check, the operation and its Redis
// flights) served in process by the full handler: tracing off, on with 1
// % of requests sampled, and on with all of them. Spans go through the
// batch processor to an exporter that drops them, so the figure is the
// gateway's own cost, not a collector's. cpu-µs/op is the test
// process's CPU time per page (the handler's, the clients', the
// exporter's; not redis-server's).
//
//	go test -run '^$' -bench Tracing -benchtime 3000x -count 5 ./internal/gateway
func BenchmarkTracing(b *testing.B) {
	for _, c := range []struct {
		name  string
		ratio float64 // < 0: tracing off
	}{{"off", -1}, {"sampled_1pct", 0.01}, {"sampled_all", 1}} {
		b.Run(c.name, func(b *testing.B) {
			var opts gatewaytest.Options
			if c.ratio >= 0 {
				tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(tracetest.NewNoopExporter()),
					sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(c.ratio))))
				b.Cleanup(func() { _ = tp.Shutdown(b.Context()) })
				opts.Tracer = tp
			}
			s := gatewaytest.New(b, opts)
			h := s.Handler(slog.New(slog.DiscardHandler), gateway.NewRegistry())
			u := s.Register(b, "bench")
			for i := range 20 {
				s.MustDo(b, u.Token, `mutation($c: String!) { createPost(input: {content: $c}) { id } }`, map[string]any{"c": fmt.Sprint("post ", i)})
			}
			body, _ := json.Marshal(map[string]any{"query": `query Home { timeline(first: 20) { edges { node { id content author { id name } } } } }`})
			b.ResetTimer()
			cpu0 := cpuTime()
			for b.Loop() {
				req := httptest.NewRequest(http.MethodPost, "/query", bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Authorization", "Bearer "+u.Token)
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != http.StatusOK {
					b.Fatalf("status %d: %s", w.Code, w.Body)
				}
			}
			// The process's CPU (not redis-server's): steadier than wall
			// time on a machine others share.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/op")
		})
	}
}

// cpuTime is the CPU time the process has used, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
