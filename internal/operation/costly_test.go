package operation

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/internal/gqlguard"
)

// TestPaceCostly: the root fields of a costly operation run at most
// costlyFields at a time; an ordinary operation's all at once.
func TestPaceCostly(t *testing.T) {
	for _, tt := range []struct {
		name string
		cost int
		want int // most root fields running at once, of 20
	}{
		{"ordinary", costlyCost - 1, 20},
		{"costly", costlyCost, costlyFields},
	} {
		t.Run(tt.name, func(t *testing.T) {
			oc := &graphql.OperationContext{Operation: &ast.OperationDefinition{Operation: ast.Query}}
			oc.Stats.SetExtension(documentLimitsName, gqlguard.Report{Cost: tt.cost, Operation: ast.Query})
			ctx := graphql.WithOperationContext(context.Background(), oc)
			paceCostly(ctx, func(ctx context.Context) graphql.ResponseHandler {
				var running, most atomic.Int32
				var wg sync.WaitGroup
				all := make(chan struct{})
				for range 20 {
					wg.Go(func() {
						pacedRootField(ctx, func(context.Context) graphql.Marshaler {
							n := running.Add(1)
							for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
							}
							if n == 20 {
								close(all)
							}
							if tt.want == 20 {
								<-all // the ordinary ones all run together
							}
							running.Add(-1)
							return graphql.Null
						})
					})
				}
				wg.Wait()
				if int(most.Load()) != tt.want {
					t.Errorf("at most %d root fields at once, want %d", most.Load(), tt.want)
				}
				return nil
			})
		})
	}
}
