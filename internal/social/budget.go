package social

import (
	"context"
	"sync"
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

// readState is what an operation's reads share: the budget, and what
// screening found of posts' audiences.
type readState struct {
	left     atomic.Int64
	mu       sync.Mutex
	screened map[[2]string]bool  // viewer, post: hidden
	matchers map[string]*Matcher // viewer: their filters (filter.go)
}

// WithReadBudget returns a context whose operation may read n candidates
// past the first read of each page.
func WithReadBudget(ctx context.Context, n int) context.Context {
	b := new(readState)
	b.left.Store(int64(n))
	return context.WithValue(ctx, readBudgetKey{}, b)
}

func readStateOf(ctx context.Context) (*readState, bool) {
	b, ok := ctx.Value(readBudgetKey{}).(*readState)
	return b, ok
}

// HasReadBudget reports whether ctx's operation has a read budget.
func HasReadBudget(ctx context.Context) bool {
	_, ok := readStateOf(ctx)
	return ok
}

// ReadBudgetLeft is what is left of ctx's read budget (0 when it has
// none): with the budget it started with, what the operation spent.
func ReadBudgetLeft(ctx context.Context) int {
	b, ok := readStateOf(ctx)
	if !ok {
		return 0
	}
	return int(max(b.left.Load(), 0))
}

// ChargeReadBudget spends n candidates of the operation's budget that
// the store read already (a script that stepped over hidden posts), past
// what is left if need be: the work was done, and the operation's later
// reads find the budget spent.
func ChargeReadBudget(ctx context.Context, n int) {
	if b, ok := readStateOf(ctx); ok && n > 0 {
		b.left.Add(-int64(n))
	}
}

// TakeReadBudget spends up to want candidates of the operation's budget
// and returns how many it may read (want when the context has none).
func TakeReadBudget(ctx context.Context, want int) int {
	b, ok := readStateOf(ctx)
	if !ok || want <= 0 {
		return want
	}
	for {
		left := b.left.Load()
		if left <= 0 {
			return 0
		}
		got := min(int64(want), left)
		if b.left.CompareAndSwap(left, left-got) {
			return int(got)
		}
	}
}

// An operation's aliases that page the same author read the same
// candidates again (pacing runs them one after another, so they share no
// batch). Whether a post's audience hides it from the viewer never
// changes (an audience is fixed; a deleted post stays gone), so what one
// page's screen found, the operation's other pages take without asking
// Redis again. maxScreenMemo bounds what an operation keeps.
const maxScreenMemo = 10_000

// Screened returns what ctx's operation already found of post id for
// viewerID: whether its audience hides it, and whether it was screened.
func Screened(ctx context.Context, viewerID, id string) (hidden, known bool) {
	b, ok := readStateOf(ctx)
	if !ok {
		return false, false
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	hidden, known = b.screened[[2]string{viewerID, id}]
	return hidden, known
}

// NoteScreened records, for ctx's operation, what a screen found of post
// id for viewerID.
func NoteScreened(ctx context.Context, viewerID, id string, hidden bool) {
	b, ok := readStateOf(ctx)
	if !ok {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.screened == nil {
		b.screened = make(map[[2]string]bool)
	}
	if len(b.screened) < maxScreenMemo {
		b.screened[[2]string{viewerID, id}] = hidden
	}
}
