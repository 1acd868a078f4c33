package tracing_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/tracing"
)

func TestNewProviderRefuses(t *testing.T) {
	tests := []struct {
		name string
		cfg  tracing.Config
		want string
	}{
		{"no endpoint", tracing.Config{Ratio: 0.5}, "endpoint"},
		{"no scheme", tracing.Config{Endpoint: "collector:4318", Ratio: 0.5}, "http"},
		{"other scheme", tracing.Config{Endpoint: "grpc://collector:4317", Ratio: 0.5}, "http"},
		{"ratio over one", tracing.Config{Endpoint: "http://collector:4318", Ratio: 1.5}, "ratio"},
		{"negative ratio", tracing.Config{Endpoint: "http://collector:4318", Ratio: -0.1}, "ratio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tracing.NewProvider(context.Background(), tt.cfg)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("NewProvider = %v, want an error about %q", err, tt.want)
			}
		})
	}
}

// TestProviderExports: spans reach an OTLP/HTTP collector at the base URL
// given, on /v1/traces, when the provider shuts down.
func TestProviderExports(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		paths, body = append(paths, r.URL.Path), b
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer srv.Close()
	tp, err := tracing.NewProvider(context.Background(), tracing.Config{Endpoint: srv.URL, Ratio: 1, Service: "svc-under-test"})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tp.Tracer("test").Start(context.Background(), "the-span")
	span.End()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := tp.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(paths) != 1 || paths[0] != "/v1/traces" || !strings.Contains(string(body), "the-span") || !strings.Contains(string(body), "svc-under-test") {
		t.Fatalf("collector got %v, body %q", paths, body)
	}
}
