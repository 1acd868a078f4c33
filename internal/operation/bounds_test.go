package operation

import (
	"context"
	"errors"
	"testing"

	"github.com/socialgw/gateway/internal/social"
)

// TestBoundFieldsCanceled: a field whose operation is canceled while it
// resolves (its client left) ends with the client-safe error of a
// stopped field, not the store's "context canceled", which the error
// presenter would log as internal; a field that fails otherwise keeps
// its error.
func TestBoundFieldsCanceled(t *testing.T) {
	failing := errors.New("load 1 users: context canceled")
	ctx, cancel := context.WithCancel(context.Background())
	_, err := boundFields(ctx, func(context.Context) (any, error) {
		cancel()
		return nil, failing
	})
	var se *social.Error
	if !errors.As(err, &se) {
		t.Errorf("canceled while resolving: %v, want a *social.Error", err)
	}
	if _, err := boundFields(context.Background(), func(context.Context) (any, error) { return nil, failing }); err != failing {
		t.Errorf("failed on its own: %v, want its error", err)
	}
}
