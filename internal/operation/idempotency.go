package operation

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/99designs/gqlgen/graphql"
	"github.com/vektah/gqlparser/v2/ast"

	"github.com/socialgw/gateway/internal/reqlog"
	"github.com/socialgw/gateway/internal/social"
)

// Idempotency keys (the IETF httpapi draft "The Idempotency-Key HTTP
// Header Field", as Stripe uses it): a mutation that carries a key (the
// Idempotency-Key header over HTTP, which the HTTP edge puts in the
// context, or "idempotencyKey" in the operation's extensions on any
// transport) runs at most once per key and user. A repeat within the
// keys' TTL, on any gateway, gets the first answer (its data and errors)
// and runs nothing; a repeat while the first still runs gets CONFLICT
// with retryAfter; a repeat whose document, operation name or variables
// differ gets BAD_USER_INPUT. An answer is kept only when its execution
// ended with no error a retry could mend: one with an internal error, a
// refused budget or a deadline, or one that was cut off, gives the key
// back, so its retry runs. User errors (BAD_USER_INPUT, NOT_FOUND,
// FORBIDDEN, CONFLICT) are the answer, and are kept. A key on a query or
// subscription is ignored (they change nothing). Anonymous mutations
// (register, login, refreshToken) refuse a key: their answers carry
// credentials, which are not stored for replay.

// IdempotencyKeys keeps the keys and answers
// (redisstore.IdempotencyStore).
type IdempotencyKeys interface {
	Claim(ctx context.Context, user, key, hash string) (social.KeyClaim, error)
	Save(ctx context.Context, user, key string, c social.KeyClaim, answer []byte) error
	Release(ctx context.Context, user, key string, c social.KeyClaim) error
}

// MaxIdempotencyKey is the longest idempotency key accepted, in bytes.
const MaxIdempotencyKey = 255

// IdempotencyExtension is the name of the key in an operation's
// extensions.
const IdempotencyExtension = "idempotencyKey"

type idemKey struct{}

// WithIdempotencyKey returns ctx carrying the raw value of a request's
// Idempotency-Key header (the HTTP edge's part); the rules check it.
func WithIdempotencyKey(ctx context.Context, raw string) context.Context {
	return context.WithValue(ctx, idemKey{}, raw)
}

// ParseIdempotencyKey returns the key a header value or extension holds:
// a structured-field string ("…") or the bare characters, 1 to
// MaxIdempotencyKey visible ASCII characters other than '"' and '\'.
func ParseIdempotencyKey(raw string) (string, error) {
	key := raw
	if len(key) >= 2 && key[0] == '"' && key[len(key)-1] == '"' {
		key = key[1 : len(key)-1]
	}
	if key == "" || len(key) > MaxIdempotencyKey {
		return "", badKey(fmt.Sprintf("the idempotency key must be 1 to %d characters", MaxIdempotencyKey))
	}
	for i := 0; i < len(key); i++ {
		if c := key[i]; c <= ' ' || c > '~' || c == '"' || c == '\\' {
			return "", badKey("the idempotency key may hold only visible ASCII characters other than '\"' and '\\'")
		}
	}
	return key, nil
}

func badKey(msg string) error { return &social.Error{Code: social.BadUserInput, Message: msg} }

// idempotency is the interceptor of keyed mutations.
type idempotency struct{ keys IdempotencyKeys }

// keyOf returns the raw idempotency key of an operation, if it has one:
// the header's, else its extensions'.
func keyOf(ctx context.Context, oc *graphql.OperationContext) (string, bool, error) {
	if raw, ok := ctx.Value(idemKey{}).(string); ok {
		return raw, true, nil
	}
	v, ok := oc.Extensions[IdempotencyExtension]
	if !ok || v == nil {
		return "", false, nil
	}
	raw, ok := v.(string)
	if !ok {
		return "", true, badKey("extensions.idempotencyKey must be a string")
	}
	return raw, true, nil
}

func (g idempotency) around(ctx context.Context, next graphql.OperationHandler) graphql.ResponseHandler {
	oc := graphql.GetOperationContext(ctx)
	if oc.Operation == nil || oc.Operation.Operation != ast.Mutation {
		return next(ctx)
	}
	raw, ok, err := keyOf(ctx, oc)
	if !ok {
		return next(ctx)
	}
	key := ""
	if err == nil {
		key, err = ParseIdempotencyKey(raw)
	}
	user := social.ViewerID(ctx)
	if err == nil && user == "" {
		err = badKey("an idempotency key needs a signed-in user: register, login and refreshToken take none")
	}
	hash := ""
	if err == nil {
		hash, err = requestHash(oc)
	}
	var c social.KeyClaim
	if err == nil {
		c, err = g.keys.Claim(ctx, user, key, hash)
	}
	if err != nil {
		return refused(ctx, err)
	}
	switch c.State {
	case social.Done:
		return replay(ctx, c.Answer)
	case social.Pending:
		return refused(ctx, &social.Error{Code: social.Conflict, RetryAfter: time.Second,
			Message: "a request with this idempotency key is still running: retry as retryAfter says"})
	case social.Mismatch:
		return refused(ctx, badKey("this idempotency key was used for another request: use a fresh key for each new mutation"))
	}
	// The key is settled once: by its answer, or released when the
	// operation ends before its execution started. An execution under
	// way settles it when it returns, even if its client has gone.
	var mu sync.Mutex
	started, settled := false, false
	h := next(detached(ctx))
	return ending(ctx, func(rctx context.Context) *graphql.Response {
		mu.Lock()
		first := !started && !settled
		started = true
		mu.Unlock()
		resp := h(detached(rctx))
		if first {
			g.settle(ctx, user, key, c, resp)
		}
		return resp
	}, func() {
		mu.Lock()
		cut := !started && !settled
		settled = true
		mu.Unlock()
		if cut {
			g.settle(ctx, user, key, c, nil)
		}
	})
}

// detached is ctx without its cancellation, within its deadline: a
// keyed mutation whose client leaves runs to its end, and keeps its
// answer for the retry, rather than stop halfway (its writes done, its
// answer an error that would give the key back).
func detached(ctx context.Context) context.Context {
	d := context.WithoutCancel(ctx)
	if end, ok := ctx.Deadline(); ok {
		// The deadline's timer ends with the operation's context.
		d, cancel := context.WithDeadline(d, end)
		context.AfterFunc(d, cancel)
		return d
	}
	return d
}

// settle keeps the answer of a claimed key's execution, or gives the key
// back when a retry may do better.
func (g idempotency) settle(ctx context.Context, user, key string, c social.KeyClaim, resp *graphql.Response) {
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	var err error
	if answer, ok := keepable(resp); ok {
		err = g.keys.Save(sctx, user, key, c, answer)
	} else {
		err = g.keys.Release(sctx, user, key, c)
	}
	if err != nil {
		// The key stays pending until its record expires: a retry meanwhile
		// gets CONFLICT, never a second execution.
		reqlog.Logger(ctx).Warn("idempotency key not settled", "err", err)
	}
}

// finalCodes are the error codes of answers a retry would repeat.
var finalCodes = map[any]bool{
	string(social.BadUserInput): true, string(social.NotFound): true,
	string(social.Forbidden): true, string(social.Conflict): true,
}

// keepable returns the answer to keep for a key: its data and errors,
// when every error is one a retry would repeat.
func keepable(resp *graphql.Response) ([]byte, bool) {
	if resp == nil {
		return nil, false
	}
	for _, e := range resp.Errors {
		if !finalCodes[e.Extensions["code"]] {
			return nil, false
		}
	}
	b, err := json.Marshal(graphql.Response{Data: resp.Data, Errors: resp.Errors})
	if err != nil {
		return nil, false
	}
	if len(b) > MaxKeptAnswer {
		// The mutation ran: its repeats must not run it again.
		return tooLargeToKeep, true
	}
	return b, true
}

// MaxKeptAnswer is the largest answer kept for a key, in bytes; a larger
// one is kept as a CONFLICT error that says so (the mutation is not run
// again), so that a user's keys hold at most the keys' cap times this.
const MaxKeptAnswer = 64 << 10

var tooLargeToKeep = []byte(`{"data":null,"errors":[{"message":"this idempotency key's mutation ran, and its answer was too large to keep: read the result with a query","extensions":{"code":"CONFLICT"}}]}`)

// replay answers a repeat with the first answer.
func replay(ctx context.Context, answer []byte) graphql.ResponseHandler {
	var resp graphql.Response
	if err := json.Unmarshal(answer, &resp); err != nil {
		return refused(ctx, fmt.Errorf("decode stored answer: %w", err))
	}
	sent := false
	return func(context.Context) *graphql.Response {
		if sent {
			return nil
		}
		sent = true
		return &resp
	}
}

// requestHash is the hash a key's repeats must match: the document, the
// operation name and the variables (encoding/json sorts map keys).
func requestHash(oc *graphql.OperationContext) (string, error) {
	vars, err := json.Marshal(oc.Variables)
	if err != nil {
		return "", fmt.Errorf("hash request variables: %w", err)
	}
	h := sha256.New()
	for _, part := range [][]byte{[]byte(oc.RawQuery), []byte(oc.OperationName), vars} {
		h.Write(part)
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
