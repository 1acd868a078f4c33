package operation

import (
	"context"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/gqlerr"
	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/social"
)

// The operation gate: every operation passes it before it executes,
// whatever carried it. An HTTP request carries one operation, and the
// HTTP edge has already admitted it (its token checked, the address's
// budget spent, an execution slot taken, its response bounded) before the
// body was decoded; it marks the request so (Admitted). Every other
// operation (each one sent over a websocket, and any a future transport
// carries) is admitted here, by the same rules, one operation at a time:
//
//   - its connection's token is checked again: a token that expired or
//     was revoked, or whose user is gone, stops the operation with
//     UNAUTHENTICATED and closes the connection (4401);
//   - one event of the client address's request budget has been spent,
//     an address whose Redis-work budget is spent refused, and a client
//     that keeps sending while refused held by the tarpit (socketBudget,
//     before its document was parsed or validated);
//   - at most InFlight queries and mutations of one connection run or
//     wait to be written at once: the connection's read loop reserves a
//     place before it reads each message and waits when there is none
//     (connAdmission), so a client that sends without reading is held
//     back by TCP rather than queued in the process;
//   - it takes the process's execution slots (its client's share, the
//     costly and heavy lanes too), as an HTTP request does, and gives
//     them back once it has executed, before its answer is written: its
//     answer then waits within the connection's and the address's unread
//     bounds (unread), past which the connection is closed;
//   - its response is bounded as it is built (MAX_RESPONSE_BYTES); its
//     deadline is the deadline middleware's.
type gate struct {
	authn    auth.Authenticator
	slots    *Slots
	maxBytes int
	unread   *unread
}

type admittedKey struct{}

// Admitted marks an HTTP request's context: its one operation was
// admitted at the HTTP edge.
func Admitted(ctx context.Context) context.Context {
	return context.WithValue(ctx, admittedKey{}, true)
}

func (g *gate) around(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	if ctx.Value(admittedKey{}) != nil {
		return next(ctx)
	}
	oc := graphql.GetOperationContext(ctx)
	s := ConnFrom(ctx)
	if s == nil || oc.Operation == nil {
		// Not an operation of any transport this handler serves (a
		// document that failed validation has no operation: it runs
		// nothing).
		return next(ctx)
	}
	s.Touch()
	// A query or mutation holds the in-flight place the connection's
	// read loop reserved for its message (connAdmission) until its
	// answer is written; whatever happens below gives it back once.
	var once sync.Once
	done := func() {}
	if oc.Operation.Operation != ast.Subscription {
		s.running.Add(1)
		done = func() { once.Do(func() { <-s.inflight; s.running.Add(-1); s.Touch() }) }
	}
	ctx, err := g.authenticate(ctx, s)
	if err != nil {
		if social.ErrorCode(err) == social.Internal || ctx.Err() != nil {
			return ending(ctx, refused(ctx, err), done)
		}
		// Told why, then closed: every later operation would fail alike.
		return ending(ctx, refused(ctx, err), func() {
			done()
			s.Close(CloseUnauthorized, "the access token expired or was revoked: reconnect with a fresh one")
		})
	}
	if oc.Operation.Operation == ast.Subscription {
		s.subs.Add(1)
		return ending(ctx, next(ctx), func() { s.subs.Add(-1); s.Touch() })
	}
	report, _ := reportOf(oc)
	heavy := IsHeavy(report)
	if heavy {
		// One heavy answer per connection is built or written at a
		// time; the others wait their turn, holding nothing yet.
		select {
		case s.heavy <- struct{}{}:
		case <-ctx.Done():
			return ending(ctx, refused(ctx, ctx.Err()), done)
		}
		inner := done
		done = func() { inner(); <-s.heavy }
	}
	lease, ok := g.slots.Acquire(ctx, Demand{Client: ClientOf(ctx), Heavy: heavy, Costly: IsCostly(report)})
	if !ok {
		return ending(ctx, refused(ctx, &social.Error{Code: social.RateLimited, RetryAfter: time.Second,
			Message: "the server is busy: retry in a second"}), done)
	}
	return g.execute(ctx, s, lease, next, done)
}

// execute runs an admitted operation. Its slots go back as soon as it
// has executed (its response is built), not once its client has read the
// answer: an answer waiting to be written holds only its bytes, counted
// against its connection's and its address's unread bounds; an answer
// that does not fit them closes the connection and is dropped. done (the
// connection's places) runs once the answer is written, or dropped.
func (g *gate) execute(ctx context.Context, s *Conn, lease *Lease, next graphql.OperationHandler, done func()) graphql.ResponseHandler {
	ectx, cancel := context.WithCancelCause(ctx)
	ectx = WithResponseBudget(ectx, g.maxBytes, func() { cancel(ErrTooLarge) })
	executed := sync.OnceFunc(func() {
		cancel(nil)
		lease.Release()
	})
	var mu sync.Mutex
	written := func() {} // gives the answer's unread bytes back
	ended := false       // done has run: an answer held later goes back at once
	h := next(ectx)
	first := true
	return ending(ctx, func(rctx context.Context) *graphql.Response {
		resp := h(rctx)
		if !first {
			return resp
		}
		first = false
		executed()
		if resp == nil {
			return nil
		}
		release, reason := g.unread.hold(s, answerSize(resp))
		if reason != "" {
			s.Close(CloseTryAgain, reason)
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		if ended {
			release()
			return nil
		}
		written = release
		return resp
	}, func() {
		executed()
		mu.Lock()
		ended = true
		written()
		mu.Unlock()
		done()
	})
}

// authenticate checks the connection's token for this operation and puts
// its viewer in the context (none for a connection without a token).
func (g *gate) authenticate(ctx context.Context, s *Conn) (context.Context, error) {
	ctx = social.WithViewer(ctx, social.Viewer{}) // anonymous unless the token holds
	token := s.Token()
	if token == "" {
		return ctx, nil
	}
	v, err := g.authn.Authenticate(ctx, token)
	if err != nil {
		return ctx, err
	}
	return social.WithViewer(ctx, v), nil
}

// refused answers an operation with one error and runs nothing; nothing
// when its connection is gone (an error then is no news, and not logged).
func refused(ctx context.Context, err error) graphql.ResponseHandler {
	if ctx.Err() != nil {
		return func(context.Context) *graphql.Response { return nil }
	}
	gerr := gqlerr.Present(ctx, err)
	sent := false
	return func(context.Context) *graphql.Response {
		if sent {
			return nil
		}
		sent = true
		return &graphql.Response{Errors: gqlerror.List{gerr}}
	}
}

// ending calls done once the operation's responses have all been taken
// and written (the transport asks for the next one only after writing
// the last), or its context ended.
func ending(ctx context.Context, h graphql.ResponseHandler, done func()) graphql.ResponseHandler {
	var once sync.Once
	stop := context.AfterFunc(ctx, func() { once.Do(done) })
	return func(rctx context.Context) *graphql.Response {
		resp := h(rctx)
		if resp == nil {
			stop()
			once.Do(done)
		}
		return resp
	}
}

// connAdmission runs in a connection's read loop, once a message's
// document has been parsed and validated: a query or mutation claims the
// in-flight place the loop reserved for the message (the gate gives it
// back when its answer is written); any other message's place returns
// when the loop reads the next one. A document that fails validation
// never gets here and claims nothing.
type connAdmission struct{}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationContextMutator
} = connAdmission{}

func (connAdmission) ExtensionName() string                   { return "SocketAdmission" }
func (connAdmission) Validate(graphql.ExecutableSchema) error { return nil }
func (connAdmission) MutateOperationContext(ctx context.Context, oc *graphql.OperationContext) *gqlerror.Error {
	if s := ConnFrom(ctx); s != nil && oc.Operation != nil && oc.Operation.Operation != ast.Subscription {
		s.claim()
	}
	return nil
}

// socketBudget admits each operation of a connection against its client
// address's budgets before its document is parsed or validated, as the
// HTTP edge admits a request before reading its body (httpapi's
// ClientBudget and redisWorkOwed), so that a socket whose operations are
// refused costs no more than the requests of an HTTP client refused
// alike: past a few refusals the tarpit holds the connection's read loop
// until the client's wait is over (TCP then holds the client back), and
// closes the connection when too many of the client's are held; an
// address whose Redis-work budget is spent is refused without its
// document being parsed; then one event of the request budget is spent.
// A document that fails validation costs that work, and over HTTP its
// request has spent the event already, so no socket validates without
// limit.
type socketBudget struct {
	budget Limiter // nil: no request budget
	// owed is how long an address must still wait for its Redis-work
	// budget (Rules.RedisWorkOwed).
	owed   func(addr string) time.Duration
	tarpit *ratelimit.Tarpit
}

var _ interface {
	graphql.HandlerExtension
	graphql.OperationParameterMutator
} = socketBudget{}

// CloseTryAgain is RFC 6455's 1013 (try again later): a connection
// closed for what its client sent too fast or did not read.
const CloseTryAgain = 1013

func (socketBudget) ExtensionName() string                   { return "SocketRequestBudget" }
func (socketBudget) Validate(graphql.ExecutableSchema) error { return nil }
func (e socketBudget) MutateOperationParameters(ctx context.Context, _ *graphql.RawParams) *gqlerror.Error {
	s := ConnFrom(ctx)
	if s == nil || ctx.Value(admittedKey{}) != nil {
		return nil
	}
	if !e.tarpit.Hold(ctx, s.addr) {
		s.Close(CloseTryAgain, "too many operations refused: wait as retryAfter says")
		return gqlerr.Present(ctx, &social.Error{Code: social.RateLimited, RetryAfter: time.Second,
			Message: "too many operations refused: wait as retryAfter says"})
	}
	var err error
	if wait := e.owed(s.addr); wait > 0 {
		err = RedisWorkRefusal(wait)
	}
	if err == nil && e.budget != nil && e.budget.Has(ratelimit.RuleRequestIP) {
		err = e.budget.Allow(ctx, ratelimit.RuleRequestIP, s.addr)
	}
	if err != nil {
		e.tarpit.RefusedBy(s.addr, err)
		return gqlerr.Present(ctx, err)
	}
	return nil
}
