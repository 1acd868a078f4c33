package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// authorLocks is what a visibility check reads about the authors of its
// posts for the lock rule (social.AccessFacts.AuthorLocked): whether each
// is a locked account (one SMISMEMBER of LockedUsers a batch, in the
// check's pipeline; never the profile cache: it decides what a reader may
// see), and, for a signed-in viewer and only for the authors that are
// locked, whether the viewer follows each (followFlagsScript, one more
// round trip, only for a batch holding a locked author's post). Locked
// accounts are few, so most pages pay one command for the rule. The lock
// is a fact of the author, not of the post, so an account that locks or
// unlocks changes what readers see of all its posts at once, with
// nothing re-indexed.
type authorLocks struct {
	reads   []lockRead
	lockedA map[string]bool // built by read
	follows map[string]bool // built by readFollows
	seen    map[string]bool // authors queued
	asked   map[string]bool // locked authors whose follow was queued
	flags   *redis.Cmd      // the follow read queued (queueFollows)
	flagged []string        // its authors
}

// lockRead is one batch of authors: SMISMEMBER of LockedUsers.
type lockRead struct {
	authors []string
	locked  *redis.BoolSliceCmd
}

// queue adds the reads of authors' locks not read yet (the viewer
// excepted, and "" for an author not known) to p.
func (l *authorLocks) queue(ctx context.Context, p redis.Pipeliner, k Keys, viewer string, authors []string) int {
	var fresh []string
	for _, a := range authors {
		if a == "" || a == viewer || !social.IsID(a) {
			continue
		}
		if l.seen[a] {
			continue
		}
		if l.seen == nil {
			l.seen = make(map[string]bool, len(authors))
		}
		l.seen[a] = true
		fresh = append(fresh, a)
	}
	if len(fresh) == 0 {
		return 0
	}
	l.reads = append(l.reads, lockRead{authors: fresh, locked: p.SMIsMember(ctx, k.LockedUsers(), toAny(fresh)...)})
	return len(fresh)
}

// read takes in the replies of the lock reads that ran.
func (l *authorLocks) read() error {
	for _, r := range l.reads {
		locked, err := r.locked.Result()
		if err != nil {
			return fmt.Errorf("read locks of %d authors: %w", len(r.authors), err)
		}
		if l.lockedA == nil {
			l.lockedA = make(map[string]bool, len(r.authors))
		}
		for i, a := range r.authors {
			l.lockedA[a] = i < len(locked) && locked[i]
		}
	}
	l.reads = nil
	return nil
}

// queueFollows queues whether viewer follows the locked authors read so
// far whose follow is not known yet, and returns how many.
func (l *authorLocks) queueFollows(ctx context.Context, p redis.Pipeliner, k Keys, viewer string) int {
	l.flags, l.flagged = nil, nil
	if viewer == "" {
		return 0
	}
	for a, locked := range l.lockedA {
		if locked && !l.asked[a] {
			l.flagged = append(l.flagged, a)
		}
	}
	if len(l.flagged) == 0 {
		return 0
	}
	l.flags = followFlagsScript.EvalSha(ctx, p, []string{k.Following(viewer)}, toAny(l.flagged)...)
	return len(l.flagged)
}

// readFollows takes in the reply of the follow read that ran.
func (l *authorLocks) readFollows() error {
	if l.flags == nil {
		return nil
	}
	follows, err := l.flags.Text()
	if err != nil {
		return fmt.Errorf("read follows of %d authors: %w", len(l.flagged), err)
	}
	if l.follows == nil {
		l.follows = make(map[string]bool, len(l.flagged))
	}
	if l.asked == nil {
		l.asked = make(map[string]bool, len(l.flagged))
	}
	for i, a := range l.flagged {
		l.follows[a] = i < len(follows) && follows[i] == '1'
		l.asked[a] = true
	}
	l.flags, l.flagged = nil, nil
	return nil
}

// locked reports whether author is a locked account, as read.
func (l *authorLocks) locked(author string) bool { return l.lockedA[author] }

// knownAuthors are the posts' authors known before their hashes arrive:
// the hint (withAuthors), else the author the post cache holds (fixed,
// and checked against the hash by the read itself), so that a read of a
// post by id that this gateway read before knows its author too.
func (v *visibility) knownAuthors() []string {
	out := make([]string, len(v.ids))
	for i := range v.ids {
		if i < len(v.authors) && v.authors[i] != "" {
			out[i] = v.authors[i]
		} else if i < len(v.fixed) && v.fixed[i] != nil {
			out[i] = cachedAuthor(v.fixed[i])
		}
	}
	return out
}

// cachedAuthor is the author among a post's cached fixed fields.
func cachedAuthor(fixed []any) string {
	at := postRecord.at("author")
	for j, i := range postCachePlan.keep {
		if i == at && j < len(fixed) {
			s, _ := fixed[j].(string)
			return s
		}
	}
	return ""
}

// settleLocks reads the locks of the authors the hashes named that no
// hint did (one more round trip, only then), then, for a signed-in
// viewer, whether they follow the locked ones (one more, only when there
// are any).
func (v *visibility) settleLocks(ctx context.Context) error {
	var missing []string
	for i := range v.ids {
		if r := v.rows[i]; r != nil && r.post.AuthorID != "" {
			missing = append(missing, r.post.AuthorID)
		}
	}
	if err := v.locksRound(ctx, "locks", func(p redis.Pipeliner) int {
		return v.locks.queue(ctx, p, v.r.keys, v.viewer, missing)
	}); err != nil {
		return err
	}
	if err := v.locks.read(); err != nil {
		return err
	}
	if err := v.locksRound(ctx, "follows", func(p redis.Pipeliner) int {
		return v.locks.queueFollows(ctx, p, v.r.keys, v.viewer)
	}); err != nil {
		return err
	}
	return v.locks.readFollows()
}

// locksRound runs one round trip of what queue queues, when it queues
// anything.
func (v *visibility) locksRound(ctx context.Context, what string, queue func(redis.Pipeliner) int) error {
	var n int
	cmds, err := pipelined(ctx, v.r.rdb, func(p redis.Pipeliner) error {
		if n = queue(p); n == 0 {
			return errNothingQueued
		}
		return nil
	})
	if err == errNothingQueued {
		return nil
	}
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("read the %s of %d authors: %w", what, n, err)
	}
	return nil
}
