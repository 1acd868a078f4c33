package social

import (
	"context"
	"sync/atomic"
)

// A read budget bounds the work one operation may make the store do
// beyond what its page sizes say: candidates read and dropped because
// the viewer may not see them. The cost model counts the items a page
// shows; a page whose candidates are mostly hidden would otherwise read
// many more (an author with thousands of posts for others only), and
// aliases would multiply that. Once the budget is spent, such a page ends
// short, with HasNext and an End cursor to go on from.

// DefaultReadBudget is the candidates an operation may read past the
// first read of each page.
const DefaultReadBudget = 2000

type readBudgetKey struct{}

// WithReadBudget returns a context whose operation may read n candidates
// past the first read of each page.
func WithReadBudget(ctx context.Context, n int) context.Context {
	b := new(atomic.Int64)
	b.Store(int64(n))
	return context.WithValue(ctx, readBudgetKey{}, b)
}

// HasReadBudget reports whether ctx's operation has a read budget.
func HasReadBudget(ctx context.Context) bool {
	_, ok := ctx.Value(readBudgetKey{}).(*atomic.Int64)
	return ok
}

// ReadBudgetLeft is what is left of ctx's read budget (0 when it has
// none): with the budget it started with, what the operation spent.
func ReadBudgetLeft(ctx context.Context) int {
	b, ok := ctx.Value(readBudgetKey{}).(*atomic.Int64)
	if !ok {
		return 0
	}
	return int(max(b.Load(), 0))
}

// TakeReadBudget spends up to want candidates of the operation's budget
// and returns how many it may read (want when the context has none).
func TakeReadBudget(ctx context.Context, want int) int {
	b, ok := ctx.Value(readBudgetKey{}).(*atomic.Int64)
	if !ok || want <= 0 {
		return want
	}
	for {
		left := b.Load()
		if left <= 0 {
			return 0
		}
		got := min(int64(want), left)
		if b.CompareAndSwap(left, left-got) {
			return int(got)
		}
	}
}
