// Package ratelimit throttles requests with GCRA budgets kept in Redis
// (github.com/go-redis/redis_rate), so a limit holds across every gateway
// instance that shares the Redis: per client address for whole requests,
// per address and per account for logins and registrations, per user for
// each root mutation field.
package ratelimit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// Rules of the gateway. Login and registration rules are spent by
// internal/auth (the names are auth's), the others at the HTTP and
// GraphQL edge.
const (
	RuleRequestIP    = "ip"       // every /query request, per client address
	RuleMutationUser = "mutation" // every root mutation field, per user (per address when anonymous)
	RuleAPQIP        = "apq"      // persisted-query registrations, per client address
	RuleUploadUser   = "upload"   // media files attached to posts, per user
	// RuleRedisWork is Redis work: the units of every operation past its
	// free share (internal/operation's Redis meter), per client address
	// and per user.
	RuleRedisWork = "redis"
)

// Limit is a budget: Count events per Per, of which all Count may come at
// once (the GCRA burst); the zero Limit is no limit.
type Limit struct {
	Count int
	Per   time.Duration
}

// Off reports whether the limit is disabled.
func (l Limit) Off() bool { return l.Count <= 0 || l.Per <= 0 }

// String writes the limit as ParseLimit reads it.
func (l Limit) String() string {
	if l.Off() {
		return "off"
	}
	d := l.Per.String()
	if strings.HasSuffix(d, "m0s") {
		d = strings.TrimSuffix(d, "0s")
	}
	if strings.HasSuffix(d, "h0m") {
		d = strings.TrimSuffix(d, "0m")
	}
	return strconv.Itoa(l.Count) + "/" + d
}

// ParseLimit reads "N/duration" (e.g. "10/1m", "600/1m", "5/15m") or "off"
// (also "" and "0").
func ParseLimit(s string) (Limit, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "off" || s == "0" {
		return Limit{}, nil
	}
	n, per, ok := strings.Cut(s, "/")
	count, err := strconv.Atoi(strings.TrimSpace(n))
	if !ok || err != nil || count < 1 {
		return Limit{}, fmt.Errorf("rate limit %q: want N/duration (e.g. 10/1m) or off", s)
	}
	d, err := time.ParseDuration(strings.TrimSpace(per))
	if err != nil || d < time.Second {
		return Limit{}, fmt.Errorf("rate limit %q: the period must be a duration of at least 1s", s)
	}
	return Limit{Count: count, Per: d}, nil
}

// Limiter spends rule budgets in Redis.
type Limiter struct {
	rl     *redis_rate.Limiter
	key    func(rule, subject string) string
	limits map[string]Limit
	// Limited is called with the rule of every refused event (metrics);
	// may be nil.
	Limited func(rule string)
}

// New returns a limiter over rdb. key builds the Redis key of a rule's
// budget for a subject (internal/redisstore's Keys.RateLimit: redis_rate
// puts "rate:" in front of it); limits maps rule names to their budgets,
// and a rule that is missing or Off is not limited.
func New(rdb redis.UniversalClient, key func(rule, subject string) string, limits map[string]Limit) *Limiter {
	return &Limiter{rl: redis_rate.NewLimiter(rdb), key: key, limits: limits}
}

// Has reports whether rule is limited, so callers can leave out the
// machinery of a rule that is off.
func (l *Limiter) Has(rule string) bool {
	if l == nil {
		return false
	}
	lim, ok := l.limits[rule]
	return ok && !lim.Off()
}

// Allow spends one event of rule's budget for subject, or returns a
// RATE_LIMITED *social.Error carrying how long to wait. Subjects are
// hashed into the key, so an attacker-chosen login name neither bloats the
// key nor lands in Redis readable.
func (l *Limiter) Allow(ctx context.Context, rule, subject string) error {
	if l == nil {
		return nil
	}
	lim, ok := l.limits[rule]
	if !ok || lim.Off() {
		return nil
	}
	sum := sha256.Sum256([]byte(subject))
	res, err := l.rl.Allow(ctx, l.key(rule, hex.EncodeToString(sum[:12])), redis_rate.Limit{
		Rate: lim.Count, Burst: lim.Count, Period: lim.Per,
	})
	if err != nil {
		return fmt.Errorf("rate limit %s: %w", rule, err)
	}
	if res.Allowed > 0 {
		return nil
	}
	if l.Limited != nil {
		l.Limited(rule)
	}
	wait := max(res.RetryAfter, time.Second)
	return &social.Error{
		Code:       social.RateLimited,
		Message:    fmt.Sprintf("too many requests (%s limit of %s): retry in %d s", rule, lim, Seconds(wait)),
		RetryAfter: wait,
	}
}

// Spend charges n events of rule's budget for subject after they
// happened (work already done cannot be refused) and returns how long the
// subject must wait before its budget has room again: 0 while it has some
// left. What the budget could not pay is owed: the wait covers it.
func (l *Limiter) Spend(ctx context.Context, rule, subject string, n int) (time.Duration, error) {
	if l == nil || n <= 0 {
		return 0, nil
	}
	lim, ok := l.limits[rule]
	if !ok || lim.Off() {
		return 0, nil
	}
	sum := sha256.Sum256([]byte(subject))
	res, err := l.rl.AllowAtMost(ctx, l.key(rule, hex.EncodeToString(sum[:12])), redis_rate.Limit{
		Rate: lim.Count, Burst: lim.Count, Period: lim.Per,
	}, n)
	if err != nil {
		return 0, fmt.Errorf("rate limit %s: %w", rule, err)
	}
	if res.Remaining > 0 {
		return 0, nil
	}
	if l.Limited != nil {
		l.Limited(rule)
	}
	owed := time.Duration(n-res.Allowed) * lim.Per / time.Duration(lim.Count)
	return owed + max(res.RetryAfter, 0), nil
}

// Seconds is a wait in whole seconds, rounded up (what Retry-After and
// extensions.retryAfter say).
func Seconds(d time.Duration) int { return int(math.Ceil(d.Seconds())) }
