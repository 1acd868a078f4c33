package operation

import (
	"context"
	"sync"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/socialgw/gateway/internal/clientaddr"
	"github.com/socialgw/gateway/internal/ratelimit"
)

// Automatic persisted queries. gqlgen's extension registers a document
// with its hash as soon as the hash checks out, before the document is
// measured, parsed or validated: a client could fill the shared cache
// with documents that never run. Here registration waits: the extension's
// Add only notes the document (registration, one per request or websocket
// connection, whose operations are read one after another), and
// apqRegister stores it once the document has passed the guard and
// validation, if the client address's registration budget allows
// (RuleAPQIP): one client cannot evict others' documents faster than that
// budget.

type registrationKey struct{}

// registration is the document a request offered for registration.
type registration struct {
	mu          sync.Mutex
	hash, query string
}

// WithRegistration returns the context of a request or connection whose
// persisted documents may be registered once they pass every check.
func WithRegistration(ctx context.Context) context.Context {
	return context.WithValue(ctx, registrationKey{}, &registration{})
}

type apqMemoKey struct{}

// apqMemo is a persisted query the edge already looked up (doc "": not
// found).
type apqMemo struct{ hash, doc string }

// Persisted looks up the document of a persisted query's hash ("" when
// unknown) and returns ctx remembering the answer, so that gqlgen's
// persisted-query extension reads the same answer rather than Redis
// again: the edge measures and classifies the document it will run (a
// mutation over GET, a subscription) like any other.
func (r *Rules) Persisted(ctx context.Context, hash string) (context.Context, string) {
	doc, _ := r.apq.Get(ctx, hash)
	return context.WithValue(ctx, apqMemoKey{}, apqMemo{hash, doc}), doc
}

// memoAPQ answers gqlgen's lookup of a persisted query from the request's
// context when the edge looked it up already: one Redis read a request.
type memoAPQ struct{ graphql.Cache[string] }

func (c memoAPQ) Get(ctx context.Context, hash string) (string, bool) {
	if m, ok := ctx.Value(apqMemoKey{}).(apqMemo); ok && m.hash == hash {
		return m.doc, m.doc != ""
	}
	return c.Cache.Get(ctx, hash)
}

// Add notes the document; apqRegister stores it.
func (c memoAPQ) Add(ctx context.Context, hash, query string) {
	if p, ok := ctx.Value(registrationKey{}).(*registration); ok {
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
	p, ok := ctx.Value(registrationKey{}).(*registration)
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
		if e.budget.Allow(ctx, ratelimit.RuleAPQIP, clientaddr.From(ctx)) != nil {
			return nil // runs, but is not kept: the client sends it whole again
		}
	}
	e.cache.Add(ctx, hash, query)
	return nil
}
