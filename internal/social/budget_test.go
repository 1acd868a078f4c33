package social_test

import (
	"context"
	"testing"

	"github.com/socialgw/gateway/internal/social"
)

// TestReadBudget: an operation's budget is spent once, and what its
// screens found is kept per viewer and post, for that operation only.
func TestReadBudget(t *testing.T) {
	bare := context.Background()
	if got := social.TakeReadBudget(bare, 7); got != 7 {
		t.Fatalf("no budget: took %d of 7", got)
	}
	op := social.WithReadBudget(bare, 10)
	if a, b := social.TakeReadBudget(op, 6), social.TakeReadBudget(op, 6); a != 6 || b != 4 || social.ReadBudgetLeft(op) != 0 {
		t.Fatalf("took %d then %d, %d left", a, b, social.ReadBudgetLeft(op))
	}

	social.NoteScreened(op, "1", "10", true)
	social.NoteScreened(op, "1", "11", false)
	social.NoteScreened(bare, "1", "12", true) // no operation: kept nowhere
	tests := []struct {
		ctx               context.Context
		viewer, post      string
		wantHidden, known bool
	}{
		{op, "1", "10", true, true},
		{op, "1", "11", false, true},
		{op, "2", "10", false, false}, // another viewer
		{op, "1", "12", false, false},
		{social.WithReadBudget(bare, 10), "1", "10", false, false}, // another operation
	}
	for _, tt := range tests {
		if hidden, known := social.Screened(tt.ctx, tt.viewer, tt.post); hidden != tt.wantHidden || known != tt.known {
			t.Errorf("Screened(%s, %s) = %v, %v; want %v, %v", tt.viewer, tt.post, hidden, known, tt.wantHidden, tt.known)
		}
	}
}
