package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// Deleting an account (docs/data-model.md, "Account deletion").
//
// DeleteAccount hides the account at once and queues its purge, which the
// fan-out workers run in bounded, resumable steps (fanout_purge.go):
//
//  1. XADD the purge job to the fan-out queue (first, so whatever this
//     call leaves undone the job does: its first step repeats 2 and 3).
//  2. SADD the user to Deleting: every visibility check reads that set,
//     so the user's posts disappear from every page and post(id) on
//     every gateway, whatever the post cache holds.
//  3. accountGoneScript in the user's slot: the profile hash becomes the
//     purge record (Gone). From then on user(id) is null, a login by the
//     name or address finds no account, and an access token of the user
//     authenticates nobody (verification checks the profile exists); the
//     gateways' profile caches drop it when Redis announces the write.
//  4. The first batch of the account's comments goes (the purge's
//     comments stage, run once), since Deleting does not hide comments.
//
// The name and the address stay taken until the purge ends, when its
// last step frees them.

// purgeAt is the purge record's field of when the account was deleted
// (ms); purgeStage the stage its purge has reached.
// purgeSeen when its job last recorded progress (ms: a stage done, or a
// delivery handing over to its continuation).
const (
	purgeAt    = "purge_at"
	purgeStage = "purge_stage"
	purgeSeen  = "purge_seen"
	jobUser    = "user" // a purge job's user
	// purgeStall is how long a purge may show no progress, with no worker
	// holding its lease, before the sweep queues its job again (a job
	// dead-lettered, or lost with a shard's stream).
	purgeStall = 10 * time.Minute
)

// DeleteAccount deletes the account of userID: hidden at once, purged by
// the fan-out workers. Idempotent (a repeat while the purge runs is
// harmless); NOT_FOUND for an account that does not exist.
func (s *AccountService) DeleteAccount(ctx context.Context, userID string) error {
	if !social.IsID(userID) {
		return social.Errorf(social.NotFound, "user %s not found", userID)
	}
	if err := queuePurge(ctx, s.rdb, s.keys, s.set, userID); err != nil {
		return err
	}
	n, err := hideAccount(ctx, s.rdb, s.keys, s.set, userID)
	if err != nil {
		return err
	}
	if n == 0 {
		return social.Errorf(social.NotFound, "user %s not found", userID)
	}
	// The first batch of the account's comments (most accounts' all)
	// goes now, as the purge's comments stage would take it: comments are
	// not hidden by Deleting. A failure leaves them to the job.
	p := &purge{s: &FanoutService{rdb: s.rdb, keys: s.keys, set: s.set}, id: userID}
	_, _ = p.comments(ctx)
	return nil
}

// queuePurge queues the purge job of userID; a retried XADD queues it
// twice, which the job's lease makes harmless.
func queuePurge(ctx context.Context, rdb redis.UniversalClient, k Keys, set *settings, userID string) error {
	err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: fanoutStream(k, set.feed.FanoutShards, userID),
		Values: []any{jobOp, opPurge, jobUser, userID}}).Err()
	if err != nil {
		return fmt.Errorf("queue the purge of %s: %w", userID, err)
	}
	return nil
}

// hideAccount runs steps 2 and 3 (idempotent): it answers 1 when it hid
// the account, 2 when it was hidden before, 0 when there is no such
// account.
func hideAccount(ctx context.Context, rdb redis.UniversalClient, k Keys, set *settings, userID string) (int64, error) {
	if err := setAuthorFlag(ctx, rdb, k, userID, flagDeleting, true, k.Deleting()); err != nil {
		return 0, fmt.Errorf("hide the posts of %s: %w", userID, err)
	}
	n, err := accountGoneScript.Run(ctx, rdb, []string{k.User(userID), k.Gone(userID)}, purgeAt, set.now().UnixMilli()).Int64()
	// This gateway forgets the profile at once; the others when Redis's
	// invalidation reaches them.
	set.profiles.Invalidate(k.User(userID))
	if err != nil {
		return 0, fmt.Errorf("hide account %s: %w", userID, err)
	}
	if n == 0 {
		// Nothing to delete: a purge of nothing must not hide anyone, and
		// an account that is gone keeps no flag (a purge cut short
		// between its record and its flags ends here).
		if err := setAuthorFlag(ctx, rdb, k, userID, allFlags, false, k.Deleting()); err != nil {
			return 0, fmt.Errorf("hide account %s: %w", userID, err)
		}
	}
	return n, nil
}

// sweepPurges queues the job of every purge in flight that shows no
// progress for purgeStall and whose lease no worker holds; a job queued
// twice is harmless (the lease, and the recorded stage). It returns how
// many it queued.
func (s *AccountService) sweepPurges(ctx context.Context, now int64) (int, error) {
	ids, err := s.rdb.SMembers(ctx, s.keys.Deleting()).Result()
	if err != nil {
		return 0, fmt.Errorf("sweep purges: %w", err)
	}
	n := 0
	for _, id := range ids {
		var lease *redis.IntCmd
		var marks *redis.SliceCmd
		if _, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			lease = p.Exists(ctx, s.keys.PurgeLease(id))
			marks = p.HMGet(ctx, s.keys.Gone(id), purgeAt, purgeSeen)
			return nil
		}); err != nil {
			return n, fmt.Errorf("sweep purges: %w", err)
		}
		var last int64
		for _, v := range marks.Val() {
			if str, ok := v.(string); ok {
				if ms, _ := strconv.ParseInt(str, 10, 64); ms > last {
					last = ms
				}
			}
		}
		if lease.Val() != 0 || last+purgeStall.Milliseconds() > now {
			continue
		}
		if err := queuePurge(ctx, s.rdb, s.keys, s.set, id); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}
