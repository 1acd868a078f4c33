package graph

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/social"
)

// Automatic persisted queries. gqlgen's extension registers a document
// with its hash as soon as the hash checks out, before the document is
// measured, parsed or validated: a client could fill the shared cache
// with documents that never run. Here registration waits: the extension's
// Add only notes the document (apqPending, one per request or websocket
// connection, whose operations are read one after another), and
// apqRegister stores it once the document has passed the guard and
// validation, if the client address's registration budget allows
// (RuleAPQIP): one client cannot evict others' documents faster than that
// budget.

type apqPendingKey struct{}

// apqPending is the document a request offered for registration.
type apqPending struct {
	mu          sync.Mutex
	hash, query string
}

func withAPQPending(ctx context.Context) context.Context {
	return context.WithValue(ctx, apqPendingKey{}, &apqPending{})
}

// Add notes the document; apqRegister stores it.
func (c memoAPQ) Add(ctx context.Context, hash, query string) {
	if p, ok := ctx.Value(apqPendingKey{}).(*apqPending); ok {
		p.mu.Lock()
		p.hash, p.query = hash, query
		p.mu.Unlock()
	}
}

// apqRegister is the extension that stores a noted document once it has
// been validated.
type apqRegister struct {
	cache  graphql.Cache[string]
	budget Limiter
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = apqRegister{}

func (apqRegister) ExtensionName() string                   { return "PersistedQueryRegistration" }
func (apqRegister) Validate(graphql.ExecutableSchema) error { return nil }

func (e apqRegister) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	p, ok := ctx.Value(apqPendingKey{}).(*apqPending)
	if !ok {
		return nil
	}
	p.mu.Lock()
	hash, query := p.hash, p.query
	p.hash, p.query = "", ""
	p.mu.Unlock()
	if hash == "" || query != oc.RawQuery {
		return nil
	}
	if e.budget != nil && e.budget.Has(ratelimit.RuleAPQIP) {
		if e.budget.Allow(ctx, ratelimit.RuleAPQIP, social.ClientIP(ctx)) != nil {
			return nil // runs, but is not kept: the client sends it whole again
		}
	}
	e.cache.Add(ctx, hash, query)
	return nil
}
