package redisstore

import (
	"errors"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Readers of Redis replies shared by the services.

// msTime converts the millisecond timestamps stored in hashes.
func msTime(s string) time.Time {
	ms, _ := strconv.ParseInt(s, 10, 64)
	return time.UnixMilli(ms).UTC()
}

func msString(t time.Time) string { return strconv.FormatInt(t.UnixMilli(), 10) }

// isNil reports a missing key or field.
func isNil(err error) bool { return errors.Is(err, redis.Nil) }

// strs reads an array reply of strings.
func strs(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// pipelineErr is the error of a pipeline whose commands may answer
// redis.Nil for a missing key or field: the first other error among the
// commands sent, or nil.
func pipelineErr(cmds []redis.Cmder, err error) error {
	if err == nil || !isNil(err) {
		return err
	}
	for _, c := range cmds {
		if e := c.Err(); e != nil && !isNil(e) {
			return e
		}
	}
	return nil
}

// repeat returns n copies of s.
func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}
