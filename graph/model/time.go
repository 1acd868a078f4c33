// Package model holds the GraphQL-only types of the API: connections,
// inputs and payloads that gqlgen generates, and the Time scalar.
package model

import (
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/99designs/gqlgen/graphql"
)

// timeLayout is RFC 3339 with exactly millisecond precision, as the
// contract promises; gqlgen's default drops trailing zero fractions.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// MarshalTime renders a Time in UTC with millisecond precision.
func MarshalTime(t time.Time) graphql.Marshaler {
	return graphql.WriterFunc(func(w io.Writer) {
		var buf [40]byte
		_, _ = w.Write(AppendTime(buf[:0], t))
	})
}

// AppendTime appends a Time as MarshalTime writes it, quotes included.
func AppendTime(b []byte, t time.Time) []byte {
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, timeLayout)
	return append(b, '"')
}

// UnmarshalTime accepts an RFC 3339 string.
func UnmarshalTime(v any) (time.Time, error) {
	s, ok := v.(string)
	if !ok {
		return time.Time{}, fmt.Errorf("time must be an RFC 3339 string, got %T", v)
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("time %s is not RFC 3339", strconv.Quote(s))
	}
	return t.UTC(), nil
}
