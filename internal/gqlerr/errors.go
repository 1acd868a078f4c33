// Package gqlerr turns errors into GraphQL errors, in one place for every
// transport: the error presenter (domain code to extensions.code, internal
// errors logged and masked), the recovery of resolver panics, and how a
// subscription whose stream ends on its own tells the client why.
package gqlerr

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"

	"github.com/99designs/gqlgen/graphql"
	"github.com/redis/go-redis/v9"
	"github.com/vektah/gqlparser/v2/ast"
	"github.com/vektah/gqlparser/v2/gqlerror"

	"github.com/socialgw/gateway/internal/ratelimit"
	"github.com/socialgw/gateway/internal/reqlog"
	"github.com/socialgw/gateway/internal/social"
)

// Present is the one place errors become GraphQL errors. Domain
// errors (*social.Error) pass with their message and code; gqlgen's own
// (parse, validation, complexity, persisted query) keep theirs; a value
// gqlgen could not coerce into an argument is BAD_USER_INPUT; anything
// else is logged with the request id and masked as INTERNAL_SERVER_ERROR.
func Present(ctx context.Context, err error) *gqlerror.Error {
	gerr := graphql.DefaultErrorPresenter(ctx, err)
	var se *social.Error
	if errors.As(err, &se) {
		gerr.Message = se.Message
		setCode(gerr, string(se.Code))
		if se.RetryAfter > 0 {
			gerr.Extensions["retryAfter"] = ratelimit.Seconds(se.RetryAfter)
		}
		return gerr
	}
	var ge *gqlerror.Error
	if errors.As(err, &ge) && ge.Err == nil {
		// Raised by gqlgen itself (bad document, bad variables, limits).
		if gerr.Extensions == nil || gerr.Extensions["code"] == nil {
			setCode(gerr, string(social.BadUserInput))
		}
		return gerr
	}
	if arg, ok := argumentError(ctx, ge); ok {
		// A value gqlgen could not coerce into an argument's type (a
		// string sent as an Upload, an out-of-range Int for a custom
		// scalar): validation lets any value through for a custom
		// scalar, so the error comes from unmarshaling, with its cause
		// kept in ge.Err.
		gerr.Message = "invalid value for argument " + arg + ": " + ge.Message
		setCode(gerr, string(social.BadUserInput))
		return gerr
	}
	if unavailable(err) {
		// Expected while Redis restarts or fails over: say so, and keep
		// the log to a warning.
		reqlog.Logger(ctx).Warn("storage unavailable", "err", err, "path", gerr.Path.String())
		gerr.Message = unavailableMessage
		gerr.Extensions = map[string]any{"code": string(social.Internal)}
		return gerr
	}
	reqlog.Logger(ctx).Error("internal error", "err", err, "path", gerr.Path.String())
	gerr.Message = "internal server error"
	gerr.Extensions = map[string]any{"code": string(social.Internal)}
	return gerr
}

// unavailableMessage is what a client reads when the store cannot be
// reached: the request may be retried.
const unavailableMessage = "service temporarily unavailable; retry shortly"

// unavailable reports an error of reaching the store (a refused or broken
// connection, a network timeout, the request's deadline passing while it
// waited, a server that is loading its data after a restart or whose
// cluster is failing over) rather than of the request: the request may
// succeed when retried.
func unavailable(err error) bool {
	// net.Error: a *net.OpError, and also a read timeout that go-redis
	// hands back unwrapped ("i/o timeout", os.ErrDeadlineExceeded).
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, os.ErrDeadlineExceeded) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, context.DeadlineExceeded) ||
		redis.IsLoadingError(err) || redis.IsClusterDownError(err) || redis.IsTryAgainError(err) || redis.IsMasterDownError(err) ||
		redis.IsReadOnlyError(err)
}

// argumentError reports whether ge was raised while gqlgen coerced the
// arguments of the field being resolved, and names the argument (dotted
// path into it). Such an error's path continues the field's own path with
// one of the field's argument names (graphql.ProcessArgField); an error of
// the resolver itself, or of a field below it, carries no argument name
// after the field's path.
func argumentError(ctx context.Context, ge *gqlerror.Error) (string, bool) {
	fc := graphql.GetFieldContext(ctx)
	if fc == nil || fc.Field.Field == nil {
		return "", false
	}
	field := fc.Path()
	if len(ge.Path) <= len(field) {
		return "", false
	}
	for i, el := range field {
		if ge.Path[i] != el {
			return "", false
		}
	}
	name, ok := ge.Path[len(field)].(ast.PathName)
	if !ok || fc.Field.Arguments.ForName(string(name)) == nil {
		return "", false
	}
	return ge.Path[len(field):].String(), true
}

func setCode(e *gqlerror.Error, code string) {
	if e.Extensions == nil {
		e.Extensions = map[string]any{}
	}
	e.Extensions["code"] = code
}

// Recover turns a resolver panic into a masked internal error.
func Recover(ctx context.Context, p any) error {
	reqlog.Logger(ctx).Error("panic in resolver", "panic", fmt.Sprint(p))
	return errors.New("panic in resolver")
}
