package tracing_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/tracing"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestRedisHookSkipsHandshake: a traced command on a new connection makes
// one span, of the command, and no failed span of the connection's
// set-up (which a Redis before 7.2 answers in part with an error: it has
// no CLIENT SETINFO).
func TestRedisHookSkipsHandshake(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Addr(t), ClientName: "traced"})
	t.Cleanup(func() { _ = rdb.Close() })
	tracing.Instrument(rdb, tp)

	ctx, root := tp.Tracer("test").Start(context.Background(), "operation")
	if err := rdb.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	_, _ = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.Ping(ctx)
		p.Ping(ctx)
		return nil
	})
	root.End()

	var names []string
	for _, s := range rec.Ended() {
		names = append(names, s.Name())
		if s.Status().Code == codes.Error {
			t.Errorf("span %q failed: %s", s.Name(), s.Status().Description)
		}
	}
	if len(names) != 3 || names[0] != "redis ping" || names[1] != "redis pipeline" || names[2] != "operation" {
		t.Errorf("spans %q, want the ping, the pipeline and the operation", names)
	}
}
