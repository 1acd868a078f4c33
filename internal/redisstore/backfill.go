package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
)

// backfillIDs runs step over the ids 1 to the counter seq hands out, n
// ids a call, oldest first, and records in field of Keys.Layout
// "at:<last id done>" after each call and "done" at the end, so a run cut
// short resumes after the last id it recorded and a run after the end
// costs one read. step must be idempotent: several processes may run
// the same ids at once. It returns the sum of what step returns (what it
// went through).
func (s *DB) backfillIDs(ctx context.Context, field, seq string, n int64, step func(ctx context.Context, from, to int64) (int64, error)) (int64, error) {
	state, err := s.rdb.HGet(ctx, s.keys.Layout(), field).Result()
	if err != nil && !isNil(err) {
		return 0, fmt.Errorf("read the data layout: %w", err)
	}
	if state == "done" {
		return 0, nil
	}
	from, _ := strconv.ParseInt(strings.TrimPrefix(state, "at:"), 10, 64)
	last, err := s.rdb.Get(ctx, seq).Int64()
	if err != nil && !isNil(err) {
		return 0, fmt.Errorf("read the last id of %s: %w", seq, err)
	}
	var went int64
	for id := from + 1; id <= last; id += n {
		to := min(id+n-1, last)
		m, err := step(ctx, id, to)
		went += m
		if err != nil {
			return went, err
		}
		if err := s.rdb.HSet(ctx, s.keys.Layout(), field, "at:"+strconv.FormatInt(to, 10)).Err(); err != nil {
			return went, fmt.Errorf("record the backfill %s: %w", field, err)
		}
	}
	if err := s.rdb.HSet(ctx, s.keys.Layout(), field, "done").Err(); err != nil {
		return went, fmt.Errorf("record the backfill %s: %w", field, err)
	}
	return went, nil
}
