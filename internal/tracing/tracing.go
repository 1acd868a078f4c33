// Package tracing makes OpenTelemetry spans of the gateway's work: a
// GraphQL operation (an operation interceptor) and each Redis flight (a
// command or a pipeline, a go-redis hook), under the HTTP request's span
// that internal/gateway starts. Spans are exported with OTLP over HTTP.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// Name is the instrumentation scope of the gateway's spans.
const Name = "github.com/socialgw/gateway"

// Config says where spans go and how many requests are traced.
type Config struct {
	// Endpoint is the OTLP/HTTP collector's URL: its base
	// (http://collector:4318), to which /v1/traces is added, or the full
	// traces URL.
	Endpoint string
	// Ratio is the share of requests traced, 0 to 1. A request whose
	// caller sent a W3C traceparent follows the caller's decision.
	Ratio float64
	// Service is the service.name of the spans.
	Service string
}

// NewProvider returns a tracer provider exporting to cfg.Endpoint in
// batches; its Shutdown sends what is left.
func NewProvider(ctx context.Context, cfg Config) (*sdktrace.TracerProvider, error) {
	if cfg.Ratio < 0 || cfg.Ratio > 1 {
		return nil, fmt.Errorf("sample ratio %v: want 0 to 1", cfg.Ratio)
	}
	if cfg.Endpoint == "" {
		return nil, errors.New("no OTLP endpoint")
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("OTLP endpoint %q: want http:// or https://host:port", cfg.Endpoint)
	}
	// As OTEL_EXPORTER_OTLP_ENDPOINT: a collector's base URL gets the
	// traces path; a URL with a path is used as it is.
	if u.Path == "" || u.Path == "/" {
		u.Path = "/v1/traces"
	}
	exp, err := otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u.String()))
	if err != nil {
		return nil, fmt.Errorf("OTLP exporter for %s: %w", cfg.Endpoint, err)
	}
	res := resource.NewSchemaless(attribute.String("service.name", cfg.Service))
	return sdktrace.NewTracerProvider(
		sdktrace.WithBatcher(exp),
		sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(cfg.Ratio))),
	), nil
}
