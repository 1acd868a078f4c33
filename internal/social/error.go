package social

import (
	"errors"
	"fmt"
	"time"
)

// Code classifies an error for clients; the GraphQL layer publishes it as
// extensions.code. The values are part of the public contract.
type Code string

// The error codes of the public contract.
const (
	Unauthenticated Code = "UNAUTHENTICATED"
	Forbidden       Code = "FORBIDDEN"
	BadUserInput    Code = "BAD_USER_INPUT"
	NotFound        Code = "NOT_FOUND"
	Conflict        Code = "CONFLICT"
	RateLimited     Code = "RATE_LIMITED"
	Internal        Code = "INTERNAL_SERVER_ERROR"
)

// Error is an error meant for the client: its Message is safe to show.
// Anything that is not an *Error (or wraps none) is internal and is masked.
type Error struct {
	Code    Code
	Message string
	// RetryAfter is how long a RATE_LIMITED client should wait; published
	// as extensions.retryAfter (whole seconds, rounded up).
	RetryAfter time.Duration
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Errorf returns an *Error with a formatted message.
func Errorf(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// ErrorCode returns the code of the first *Error in err's chain, Internal
// for any other non-nil error, and "" for nil.
func ErrorCode(err error) Code {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return Internal
}

// ErrorMessage returns the client-safe message of err: the *Error's message,
// or a generic text for internal errors.
func ErrorMessage(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal server error"
}

// IsCode reports whether err carries the given code.
func IsCode(err error, code Code) bool { return ErrorCode(err) == code }
