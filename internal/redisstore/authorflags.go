package redisstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// An account's flags in AuthorFlags: the facts of an author that decide
// what readers see of all its posts at once. Each is one letter of the
// account's field; the profile keeps its own copy of locked and susp for
// reads of the user.
const (
	flagLocked    = "l" // a locked account: its posts are its followers'
	flagSuspended = "s" // suspended by a moderator: its posts read as missing
	flagDeleting  = "d" // deleted, its purge running: its posts read as missing
)

// allFlags are every flag: what an account's purge clears at its end.
const allFlags = flagLocked + flagSuspended + flagDeleting

// hiddenLetters are the flags that make an account's posts read as
// missing; hiddenCount is the field of AuthorFlags that counts the
// accounts holding one (absent at 0), which a visibility check reads with
// its authors' flags: while it is 0, a plain repost whose original's
// author the check does not know yet needs no read of that author.
const (
	hiddenLetters = flagSuspended + flagDeleting
	hiddenCount   = "#hidden"
)

// authorFlags are an account's flag letters as read ("" for none).
type authorFlags string

func (f authorFlags) locked() bool { return strings.Contains(string(f), flagLocked) }

// hidden reports whether the account's posts read as missing.
func (f authorFlags) hidden() bool { return strings.ContainsAny(string(f), hiddenLetters) }

// setAuthorFlag sets (on) or clears flag of userID (one letter, or with
// on false several: allFlags), and, with also (a set of AuthorFlags'
// slot: Deleting), adds or removes userID there in the same step.
// Idempotent.
func setAuthorFlag(ctx context.Context, rdb redis.Scripter, k Keys, userID, flag string, on bool, also ...string) error {
	keys := append([]string{k.AuthorFlags()}, also...)
	if err := authorFlagScript.Run(ctx, rdb, keys, userID, flag, boolArg(on), hiddenLetters, hiddenCount).Err(); err != nil && !isNil(err) {
		return fmt.Errorf("set flag %s of %s to %v: %w", flag, userID, on, err)
	}
	return nil
}

// readAuthorFlags reads userID's flags.
func readAuthorFlags(ctx context.Context, rdb redis.Cmdable, k Keys, userID string) (authorFlags, error) {
	f, err := rdb.HGet(ctx, k.AuthorFlags(), userID).Result()
	if err != nil && !isNil(err) {
		return "", fmt.Errorf("read the flags of %s: %w", userID, err)
	}
	return authorFlags(f), nil
}

// MigrateAuthorFlags moves the sets an earlier version kept for these
// facts (locked and suspended accounts) into AuthorFlags, and flags the
// accounts of Deleting, which stays as the purges' work list; the ids of
// accounts that no longer exist leave the old sets unflagged. Each
// member is flagged before it leaves its set, so a run cut short loses
// nothing and the next one finishes it; when nothing is left to move, a
// run costs three reads. Gateways and workers run it before they serve
// (app.MigrateAuthorFlags); when Redis fails then, they serve and try
// again every second, and until a run has passed, an account an earlier
// version locked or suspended reads as neither. It returns how many
// members it moved.
func (s *DB) MigrateAuthorFlags(ctx context.Context) (int, error) {
	k := s.keys
	moved := 0
	for _, old := range []struct {
		set, flag string
		keep      bool // the set stays, changed with the flag (Deleting)
	}{
		{k.legacyLockedUsers(), flagLocked, false},
		{k.legacySuspended(), flagSuspended, false},
		{k.Deleting(), flagDeleting, true},
	} {
		ids, err := s.rdb.SMembers(ctx, old.set).Result()
		if err != nil {
			return moved, fmt.Errorf("read %s: %w", old.set, err)
		}
		if old.keep {
			for _, id := range ids {
				if err := setAuthorFlag(ctx, s.rdb, k, id, old.flag, true, old.set); err != nil {
					return moved, err
				}
			}
			continue
		}
		// An id with no profile under either name (a worker may run this
		// before a gateway moved the profiles, MigrateProfiles) is an
		// account an earlier version purged and left in the set: it
		// leaves unflagged.
		live, err := s.accountsLive(ctx, ids)
		if err != nil {
			return moved, err
		}
		for _, id := range ids {
			if live[id] {
				if err := setAuthorFlag(ctx, s.rdb, k, id, old.flag, true); err != nil {
					return moved, err
				}
				moved++
			}
			if err := s.rdb.SRem(ctx, old.set, id).Err(); err != nil {
				return moved, fmt.Errorf("move %s out of %s: %w", id, old.set, err)
			}
		}
	}
	return moved, nil
}
