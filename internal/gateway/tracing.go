package gateway

import (
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/tracing"
)

// traced gives each request a server span ("POST /query"), continuing
// the caller's trace when it sent a W3C traceparent through one of the
// trusted proxies (TRUSTED_PROXIES). Anyone else's traceparent is ignored:
// a sampled flag, or a trace id chosen to fall under the ratio, would let
// any client decide what is traced. The operation and
// Redis spans (internal/tracing) hang under it. It runs inside accessLog,
// whose statusWriter tells it the status. Without a tracer it is next.
func (g *Gateway) traced(next http.Handler) http.Handler {
	tp := g.cfg.Tracer
	if tp == nil {
		return next
	}
	tracer := tp.Tracer(tracing.Name)
	prop := propagation.TraceContext{}
	trusted := g.cfg.Abuse.TrustedProxies
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		path := pathLabel(r.URL.Path) // span names stay few, as metric labels do
		ctx := r.Context()
		if ratelimit.FromTrustedPeer(r, trusted) {
			ctx = prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
		}
		ctx, span := tracer.Start(ctx, r.Method+" "+path, trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(attribute.String("http.request.method", r.Method), attribute.String("url.path", path)))
		defer span.End()
		next.ServeHTTP(w, r.WithContext(ctx))
		if sw, ok := w.(*statusWriter); ok {
			span.SetAttributes(attribute.Int("http.response.status_code", sw.status))
			if sw.status >= 500 {
				span.SetStatus(codes.Error, http.StatusText(sw.status))
			}
		}
	})
}
