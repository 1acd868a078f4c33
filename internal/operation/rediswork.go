package operation

import (
	"context"
	"fmt"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/redis/go-redis/v9"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/internal/clientaddr"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/social"
)

// The Redis-work budget: every query and mutation, whatever carried it,
// is metered in units of Redis work (one a command the operation sent,
// one a candidate the store read past the first read of a page, which
// the operation's read budget pays for), and what it used past
// FreeRedisWork is charged to its client's budget (ratelimit.RuleRedisWork)
// per address and, when signed in, per user. A client whose budget is
// spent has its next operations refused with RATE_LIMITED and a retry
// time until the budget has room again, so one client cannot keep Redis
// busy for more than a bounded share of its time, however cheap each of
// its requests is to send. The cost model and the read budget bound one
// operation; this bounds a client over time.

// FreeRedisWork is the units of an operation the per-address request
// budget already pays for: an ordinary page (the reference query sends
// about 170 commands) is not charged, nor does it cost a call to Redis for
// the charge.
const FreeRedisWork = 250

// WorkLimiter charges work that was done to a rule's budget
// (ratelimit.Limiter.Spend).
type WorkLimiter interface {
	Spend(ctx context.Context, rule, subject string, n int) (time.Duration, error)
	Has(rule string) bool
}

type meterKey struct{}

// meter counts the Redis commands of one operation.
type meter struct{ commands atomic.Int64 }

// RedisMeter is the go-redis hook that counts each operation's commands
// (MeterRedis adds it).
type redisMeter struct{}

var metered sync.Map // redis.UniversalClient → struct{}: hooked once

// MeterRedis adds the hook that meters operations' Redis commands to rdb,
// once however often it is called with the same client.
func MeterRedis(rdb redis.UniversalClient) {
	if _, loaded := metered.LoadOrStore(rdb, struct{}{}); !loaded {
		rdb.AddHook(redisMeter{})
	}
}

func (redisMeter) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (redisMeter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if m, ok := ctx.Value(meterKey{}).(*meter); ok {
			m.commands.Add(1)
		}
		return next(ctx, cmd)
	}
}

func (redisMeter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if m, ok := ctx.Value(meterKey{}).(*meter); ok {
			m.commands.Add(int64(len(cmds)))
		}
		return next(ctx, cmds)
	}
}

// redisWork spends the Redis-work budget of each operation's client.
type redisWork struct {
	budget WorkLimiter
	// owing holds, for each subject whose budget is spent, when it has
	// room again, so its operations are refused without asking Redis.
	mu    sync.Mutex
	owing map[string]time.Time
}

// maxOwing bounds the subjects remembered as owing: past it the oldest
// knowledge is dropped (their next charge finds the budget spent again).
const maxOwing = 100_000

func (w *redisWork) around(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation == ast.Subscription {
		return next(ctx)
	}
	subjects := workSubjects(ctx)
	if wait := w.owed(subjects); wait > 0 {
		return refused(ctx, RedisWorkRefusal(wait))
	}
	m := new(meter)
	ctx = social.WithReadBudget(context.WithValue(ctx, meterKey{}, m), social.DefaultReadBudget)
	h := next(ctx)
	var once sync.Once
	return func(rctx context.Context) *graphql.Response {
		resp := h(rctx)
		once.Do(func() {
			units := int(m.commands.Load()) + social.DefaultReadBudget - social.ReadBudgetLeft(ctx)
			w.charge(ctx, subjects, units-FreeRedisWork)
		})
		return resp
	}
}

// RedisWorkRefusal is the RATE_LIMITED error of a client whose Redis-work
// budget has room again after wait.
func RedisWorkRefusal(wait time.Duration) error {
	return &social.Error{Code: social.RateLimited, RetryAfter: wait,
		Message: fmt.Sprintf("too much Redis work (%s limit): retry in %d s", ratelimit.RuleRedisWork, ratelimit.Seconds(wait))}
}

// workSubjects are whom an operation's work is charged to: its client
// address, and its user when signed in.
func workSubjects(ctx context.Context) []string {
	out := []string{"ip:" + addrOf(ctx)}
	if id := social.ViewerID(ctx); id != "" {
		out = append(out, "user:"+id)
	}
	return out
}

// addrOf is an operation's client address: its HTTP request's, or its
// connection's.
func addrOf(ctx context.Context) string {
	if addr := clientaddr.From(ctx); addr != "" {
		return addr
	}
	if c := ConnFrom(ctx); c != nil {
		return c.addr
	}
	return ""
}

// ClientOf is whom an operation's share of the execution slots is
// counted against (Slots): its user when signed in (the clients behind
// one shared address are told apart), else its client address.
func ClientOf(ctx context.Context) string {
	if id := social.ViewerID(ctx); id != "" {
		return "user:" + id
	}
	return "ip:" + addrOf(ctx)
}

// owed is how long the longest-owing of subjects must still wait.
func (w *redisWork) owed(subjects []string) time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	var wait time.Duration
	now := time.Now()
	for _, s := range subjects {
		until, ok := w.owing[s]
		if !ok {
			continue
		}
		if d := until.Sub(now); d > 0 {
			wait = max(wait, d)
		} else {
			delete(w.owing, s)
		}
	}
	return wait
}

// charge spends units of each subject's budget, remembering the subjects
// whose budget it spent. A failure to charge lets the work go (the
// budget is a bound on abuse, not a reason to fail a request).
func (w *redisWork) charge(ctx context.Context, subjects []string, units int) {
	if units <= 0 {
		return
	}
	ctx = context.WithoutCancel(ctx)
	for _, s := range subjects {
		wait, err := w.budget.Spend(ctx, ratelimit.RuleRedisWork, s, units)
		if err != nil || wait <= 0 {
			continue
		}
		w.mu.Lock()
		if len(w.owing) >= maxOwing {
			clear(w.owing)
		}
		w.owing[s] = time.Now().Add(wait)
		w.mu.Unlock()
	}
}
