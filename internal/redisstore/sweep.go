package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// sweepBatch bounds the users one SweepPending looks at; the rest wait for
// the next sweep.
const sweepBatch = 1000

// SweepPending finishes the multi-slot writes whose process died between
// their single-slot steps and that nobody has finished since: registrations
// pending for longer than regGrace (settled: the account completed, or the
// claims released), graph edits pending for longer than graphGrace (run
// again; the actor's own next edit would do the same) and account purges
// stalled for purgeStall (their job queued again). It returns how many
// it finished. The fan-out workers run it periodically (cmd/internal/app),
// so an actor who never comes back does not leave a half edge for ever.
// Several sweepers at once are harmless: every step is idempotent.
func (s *Store) SweepPending(ctx context.Context) (int, error) {
	now := s.DB.set.now().UnixMilli()
	regs, err := s.AccountService.sweepRegistrations(ctx, now)
	if err != nil {
		return regs, err
	}
	edits, err := s.GraphService.sweepGraphEdits(ctx, now)
	if err != nil {
		return regs + edits, err
	}
	purges, err := s.AccountService.sweepPurges(ctx, now)
	return regs + edits + purges, err
}

func (s *AccountService) sweepRegistrations(ctx context.Context, now int64) (int, error) {
	pending, err := s.rdb.HGetAll(ctx, s.keys.RegPending()).Result()
	if err != nil {
		return 0, fmt.Errorf("sweep registrations: %w", err)
	}
	n := 0
	for id, v := range pending {
		var entry []any // [start ms, name, e-mail], as registerScript wrote it
		if err := json.Unmarshal([]byte(v), &entry); err != nil || len(entry) == 0 {
			return n, fmt.Errorf("sweep registrations: entry of %s: %q", id, v)
		}
		start, _ := entry[0].(float64)
		if int64(start)+regGrace.Milliseconds() >= now {
			continue // may still be running
		}
		if err := s.settleAbandoned(ctx, id); err != nil {
			return n, fmt.Errorf("sweep registrations: %w", err)
		}
		n++
	}
	return n, nil
}

func (s *GraphService) sweepGraphEdits(ctx context.Context, now int64) (int, error) {
	cutoff := now - graphGrace.Milliseconds()
	n := 0
	var errs []error
	// Batches of the index's oldest entries until none is older than the
	// cutoff; each batch is a few rounds, whatever its size.
	for {
		users, err := s.rdb.ZRangeByScoreWithScores(ctx, s.keys.GraphPendingIndex(), &redis.ZRangeBy{
			Min: "-inf", Max: strconv.FormatInt(cutoff, 10), Count: sweepBatch,
		}).Result()
		if err != nil {
			return n, fmt.Errorf("sweep graph edits: %w", err)
		}
		pending := make([]*redis.MapStringStringCmd, len(users))
		if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, z := range users {
				pending[i] = p.HGetAll(ctx, s.keys.GraphPending(z.Member.(string)))
			}
			return nil
		}); err != nil {
			return n, fmt.Errorf("sweep graph edits: %w", err)
		}
		var done []redis.Z // users with nothing left pending
		for i, z := range users {
			actor := z.Member.(string)
			finished, left, err := s.finishEdits(ctx, actor, pending[i].Val(), cutoff)
			n += finished
			if err != nil {
				errs = append(errs, err)
			}
			if left == 0 {
				done = append(done, z)
			}
		}
		if _, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
			for _, z := range done {
				score := strconv.FormatFloat(z.Score, 'f', -1, 64)
				sweepIndexScript.EvalSha(ctx, p, []string{s.keys.GraphPendingIndex()}, z.Member, score)
			}
			return nil
		}); err != nil {
			return n, fmt.Errorf("sweep graph edits: %w", err)
		}
		if len(users) < sweepBatch || len(done) == 0 {
			// The index is swept, or what is left keeps failing: the next
			// sweep tries again.
			break
		}
	}
	if len(errs) > 0 {
		return n, fmt.Errorf("sweep graph edits: %w", errors.Join(errs...))
	}
	return n, nil
}

// finishEdits runs again actor's pending edits that started at or before
// cutoff, and returns how many it finished and how many are left (still
// running, or failed again).
func (s *GraphService) finishEdits(ctx context.Context, actor string, pending map[string]string, cutoff int64) (finished, left int, err error) {
	var errs []error
	for other, v := range pending {
		op, at, _ := strings.Cut(v, ":")
		started, _ := strconv.ParseInt(at, 10, 64)
		if started > cutoff {
			left++ // still running
			continue
		}
		e, ok := s.editByName(op, actor, other)
		if !ok {
			errs = append(errs, fmt.Errorf("pending edit of %s: unknown %q", actor, v))
			left++
			continue
		}
		_, err := s.runSteps(ctx, e)
		if social.ErrorCode(err) == social.Internal {
			errs = append(errs, err)
			left++
			continue
		}
		// A refused re-run (a block came meanwhile) has dropped the entry
		// too: only a done edit runs its hook.
		if err == nil && e.hook != nil {
			if err := e.hook(ctx, e.actor, e.other); err != nil {
				errs = append(errs, err)
			}
		}
		finished++
	}
	return finished, left, errors.Join(errs...)
}
