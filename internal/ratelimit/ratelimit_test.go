package ratelimit_test

import (
	"context"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestParseLimit(t *testing.T) {
	tests := []struct {
		in   string
		want ratelimit.Limit
		bad  bool
	}{
		{"10/1m", ratelimit.Limit{Count: 10, Per: time.Minute}, false},
		{" 600 / 1m ", ratelimit.Limit{Count: 600, Per: time.Minute}, false},
		{"5/15m", ratelimit.Limit{Count: 5, Per: 15 * time.Minute}, false},
		{"off", ratelimit.Limit{}, false},
		{"", ratelimit.Limit{}, false},
		{"0", ratelimit.Limit{}, false},
		{"10", ratelimit.Limit{}, true},
		{"-1/1m", ratelimit.Limit{}, true},
		{"10/1ms", ratelimit.Limit{}, true},
		{"10/minute", ratelimit.Limit{}, true},
	}
	for _, tt := range tests {
		got, err := ratelimit.ParseLimit(tt.in)
		if (err != nil) != tt.bad || got != tt.want {
			t.Errorf("ParseLimit(%q) = %v, %v; want %v, error %v", tt.in, got, err, tt.want, tt.bad)
		}
		if err == nil {
			if again, err := ratelimit.ParseLimit(got.String()); err != nil || again != got {
				t.Errorf("String() of %v does not parse back: %v, %v", got, again, err)
			}
		}
	}
}

// TestAllow: a budget of 3 lets 3 events through at once, refuses the 4th
// with RATE_LIMITED and the wait, keeps subjects and rules apart, and an
// unset rule is unlimited.
func TestAllow(t *testing.T) {
	ctx := context.Background()
	keys := redisstore.NewKeys(redistest.Prefix(t))
	var refused []string
	l := ratelimit.New(redistest.Client(t), keys.RateLimit, map[string]ratelimit.Limit{
		"a": {Count: 3, Per: time.Minute},
		"b": {Count: 1, Per: time.Hour},
		"c": {},
	})
	l.Limited = func(rule string) { refused = append(refused, rule) }
	for i := range 3 {
		if err := l.Allow(ctx, "a", "alice"); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
	}
	err := l.Allow(ctx, "a", "alice")
	var se *social.Error
	if !social.IsCode(err, social.RateLimited) || !asError(err, &se) || se.RetryAfter < time.Second || se.RetryAfter > 21*time.Second {
		t.Fatalf("4th event: %v (retry after %v), want RATE_LIMITED after about 20 s", err, se)
	}
	if err := l.Allow(ctx, "a", "bob"); err != nil {
		t.Fatalf("another subject shares the budget: %v", err)
	}
	if err := l.Allow(ctx, "b", "alice"); err != nil {
		t.Fatalf("another rule shares the budget: %v", err)
	}
	if err := l.Allow(ctx, "b", "alice"); ratelimit.Seconds(retryAfter(err)) < 3500 {
		t.Fatalf("hourly rule: %v, want a wait of about an hour", err)
	}
	for range 100 {
		if err := l.Allow(ctx, "c", "alice"); err != nil {
			t.Fatalf("disabled rule: %v", err)
		}
		if err := l.Allow(ctx, "unknown", "alice"); err != nil {
			t.Fatalf("unknown rule: %v", err)
		}
	}
	if len(refused) != 2 || refused[0] != "a" || refused[1] != "b" {
		t.Errorf("Limited called for %q", refused)
	}
	var nilLimiter *ratelimit.Limiter
	if err := nilLimiter.Allow(ctx, "a", "x"); err != nil {
		t.Errorf("nil limiter: %v", err)
	}
}

func asError(err error, target **social.Error) bool {
	e, ok := err.(*social.Error)
	*target = e
	return ok
}

func retryAfter(err error) time.Duration {
	if e, ok := err.(*social.Error); ok {
		return e.RetryAfter
	}
	return 0
}

func TestClientIP(t *testing.T) {
	trusted, err := ratelimit.ParseProxies("10.0.0.0/8, 192.168.1.1, fd00::/8")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, remote, xff, want string
	}{
		{"direct", "203.0.113.7:4711", "", "203.0.113.7"},
		{"untrusted peer's header ignored", "203.0.113.7:4711", "1.2.3.4", "203.0.113.7"},
		{"trusted proxy", "10.1.2.3:80", "198.51.100.9", "198.51.100.9"},
		{"spoofed left entries ignored", "10.1.2.3:80", "1.1.1.1, 198.51.100.9", "198.51.100.9"},
		{"chain of trusted proxies", "10.1.2.3:80", "198.51.100.9, 192.168.1.1, 10.9.9.9", "198.51.100.9"},
		{"garbage stops at the last trusted hop", "10.1.2.3:80", "nonsense", "10.1.2.3"},
		{"IPv6 per /64", "[2001:db8:1:2:aaaa::1]:443", "", "2001:db8:1:2::/64"},
		{"IPv4-mapped IPv6", "[::ffff:203.0.113.7]:1", "", "203.0.113.7"},
		{"trusted IPv6 proxy", "[fd00::1]:80", "2001:db8::5", "2001:db8::/64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "/query", nil)
			r.RemoteAddr = tt.remote
			if tt.xff != "" {
				r.Header.Set("X-Forwarded-For", tt.xff)
			}
			if got := ratelimit.ClientIP(r, trusted); got != tt.want {
				t.Errorf("ClientIP = %q, want %q", got, tt.want)
			}
		})
	}
	if _, err := ratelimit.ParseProxies("10.0.0.0/33"); err == nil {
		t.Error("bad prefix accepted")
	}
}

// BenchmarkAllow is the cost one budget check adds to a request: one
// script run on Redis (docs/security.md gives the measured figure).
//
//	go test -run '^$' -bench Allow ./internal/ratelimit/
func BenchmarkAllow(b *testing.B) {
	ctx := context.Background()
	keys := redisstore.NewKeys(redistest.Prefix(b))
	l := ratelimit.New(redistest.Client(b), keys.RateLimit, map[string]ratelimit.Limit{"r": {Count: 1 << 30, Per: time.Second}})
	b.ResetTimer()
	for i := range b.N {
		if err := l.Allow(ctx, "r", strconv.Itoa(i%1000)); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSpend: work already done is charged in full; the wait is 0 while
// the budget has room, and once it is spent covers what is owed beyond
// it, per subject; an unset rule never waits.
func TestSpend(t *testing.T) {
	ctx := context.Background()
	keys := redisstore.NewKeys(redistest.Prefix(t))
	l := ratelimit.New(redistest.Client(t), keys.RateLimit, map[string]ratelimit.Limit{
		"w": {Count: 100, Per: 100 * time.Second}, // one unit a second
	})
	tests := []struct {
		name, rule, subject string
		n                   int
		min, max            time.Duration
	}{
		{"within the budget", "w", "a", 60, 0, 0},
		{"the rest and 50 more: owed", "w", "a", 90, 50 * time.Second, 52 * time.Second},
		{"another subject has its own", "w", "b", 100, 0, 2 * time.Second},
		{"nothing spent", "w", "c", 0, 0, 0},
		{"unset rule", "x", "a", 1000, 0, 0},
	}
	for _, tt := range tests {
		wait, err := l.Spend(ctx, tt.rule, tt.subject, tt.n)
		if err != nil || wait < tt.min || wait > tt.max {
			t.Errorf("%s: Spend(%d) = %v, %v; want a wait in [%v, %v]", tt.name, tt.n, wait, err, tt.min, tt.max)
		}
	}
}
