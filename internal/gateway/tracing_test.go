package gateway_test

import (
	"net/netip"
	"strings"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/socialgw/gateway/internal/gateway"
	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
)

// tracedServer is a test gateway whose spans land in the returned
// recorder, every request sampled.
func tracedServer(t *testing.T, sampler sdktrace.Sampler) (*gatewaytest.Server, *tracetest.SpanRecorder) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec), sdktrace.WithSampler(sampler))
	t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
	return gatewaytest.New(t, gatewaytest.Options{Tracer: tp}), rec
}

// TestTraceOfARequest: one request's trace is its HTTP span, under it the
// GraphQL operation's span named by the operation, and under that the
// operation's Redis flights.
func TestTraceOfARequest(t *testing.T) {
	s, rec := tracedServer(t, sdktrace.AlwaysSample())
	u := s.Register(t, "traced")
	s.MustDo(t, u.Token, `query Profile($name: String!) { user(name: $name) { id name followersCount } me { id } }`,
		map[string]any{"name": u.Name})

	var httpSpan, op sdktrace.ReadOnlySpan
	byID := map[string]sdktrace.ReadOnlySpan{}
	for _, sp := range rec.Ended() {
		byID[sp.SpanContext().SpanID().String()] = sp
		switch sp.Name() {
		case "POST /query":
			httpSpan = sp
		case "query Profile":
			op = sp
		}
	}
	if httpSpan == nil || op == nil {
		t.Fatalf("want spans POST /query and query Profile, got %v", names(rec.Ended()))
	}
	if httpSpan.Parent().IsValid() || op.Parent().SpanID() != httpSpan.SpanContext().SpanID() {
		t.Errorf("the operation's span is not the HTTP span's child, or the HTTP span has a parent")
	}
	// The token's check (one pipeline) runs before the operation, at
	// the HTTP edge; the resolvers' reads run under the operation.
	flights := 0
	for _, sp := range rec.Ended() {
		if !strings.HasPrefix(sp.Name(), "redis ") {
			continue
		}
		if !under(sp, httpSpan, byID) {
			t.Errorf("%s is not under the HTTP span", sp.Name())
		}
		if under(sp, op, byID) {
			flights++
		}
	}
	if flights == 0 {
		t.Fatalf("no Redis flight under the operation: %v", names(rec.Ended()))
	}
	t.Logf("trace: %v", names(rec.Ended()))
}

// TestTraceUnsampled: a request left out by the sampler records nothing,
// its Redis flights included.
func TestTraceUnsampled(t *testing.T) {
	s, rec := tracedServer(t, sdktrace.NeverSample())
	u := s.Register(t, "untraced")
	s.MustDo(t, u.Token, `{ me { id } }`, nil)
	if got := rec.Ended(); len(got) != 0 {
		t.Errorf("spans recorded for an unsampled request: %v", names(got))
	}
}

// under reports whether sp descends from anc.
func under(sp, anc sdktrace.ReadOnlySpan, byID map[string]sdktrace.ReadOnlySpan) bool {
	for p := sp; p != nil; p = byID[p.Parent().SpanID().String()] {
		if p.Parent().SpanID() == anc.SpanContext().SpanID() {
			return true
		}
	}
	return false
}

func names(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, sp := range spans {
		out = append(out, sp.Name())
	}
	return out
}

// TestTraceparentFromTrustedProxiesOnly: a caller's sampled traceparent
// decides nothing unless it comes through a trusted proxy, or any client
// could have its requests traced whatever TRACE_SAMPLE_RATIO says.
func TestTraceparentFromTrustedProxiesOnly(t *testing.T) {
	const caller = "4bf92f3577b34da6a3ce929d0e0e4736"
	header := map[string]string{"Content-Type": "application/json",
		"traceparent": "00-" + caller + "-00f067aa0ba902b7-01"}
	for _, tt := range []struct {
		name    string
		trusted []netip.Prefix
		want    bool // the caller's trace continued
	}{
		{"untrusted peer", nil, false},
		{"trusted proxy", []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8"), netip.MustParsePrefix("::1/128")}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec),
				sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.NeverSample())))
			t.Cleanup(func() { _ = tp.Shutdown(t.Context()) })
			s := gatewaytest.New(t, gatewaytest.Options{Tracer: tp, Abuse: &gateway.Abuse{TrustedProxies: tt.trusted}})
			status, _, body := s.Raw(t, "POST", "/query", header, strings.NewReader(`{"query":"{ __typename }"}`))
			if status != 200 {
				t.Fatalf("status %d: %s", status, body)
			}
			spans := rec.Ended()
			continued := len(spans) > 0 && spans[0].SpanContext().TraceID().String() == caller
			if continued != tt.want || (!tt.want && len(spans) != 0) {
				t.Errorf("caller's trace continued = %v (spans %v), want %v", continued, names(spans), tt.want)
			}
		})
	}
}
