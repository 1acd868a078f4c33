package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// authorLocks is what a visibility check reads about the authors of its
// posts for the lock rule (social.AccessFacts.AuthorLocked): whether each
// is a locked account (one SMISMEMBER of LockedUsers a batch, never the
// profile cache: it decides what a reader may see), and, for a signed-in
// viewer, whether the viewer follows each (followFlagsScript: one ZMSCORE
// of the viewer's Following a batch, answered as one short string). The lock is a fact of the author, not of the post,
// so an account that locks or unlocks changes what readers see of all
// its posts at once, with nothing re-indexed.
type authorLocks struct {
	reads   []lockRead
	lockedA map[string]bool // built by read
	follows map[string]bool // built by read
	seen    map[string]bool // authors queued
}

// lockRead is one batch of authors: SMISMEMBER of LockedUsers, and
// followFlagsScript over the viewer's Following.
type lockRead struct {
	authors []string
	locked  *redis.BoolSliceCmd
	follows *redis.Cmd // nil for an anonymous viewer
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
	r := lockRead{authors: fresh, locked: p.SMIsMember(ctx, k.LockedUsers(), toAny(fresh)...)}
	if viewer != "" {
		r.follows = followFlagsScript.EvalSha(ctx, p, []string{k.Following(viewer)}, toAny(fresh)...)
	}
	l.reads = append(l.reads, r)
	return len(fresh)
}

// read takes in the replies of the reads that ran.
func (l *authorLocks) read() error {
	for _, r := range l.reads {
		var follows string
		if r.follows != nil {
			var err error
			if follows, err = r.follows.Text(); err != nil {
				return fmt.Errorf("read follows of %d authors: %w", len(r.authors), err)
			}
		}
		locked := r.locked.Val()
		if l.lockedA == nil {
			l.lockedA, l.follows = make(map[string]bool, len(r.authors)), make(map[string]bool, len(r.authors))
		}
		for i, a := range r.authors {
			l.lockedA[a] = i < len(locked) && locked[i]
			l.follows[a] = i < len(follows) && follows[i] == '1'
		}
	}
	l.reads = nil
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
// hint did (one more round trip, only then), then the follows.
func (v *visibility) settleLocks(ctx context.Context) error {
	var missing []string
	for i := range v.ids {
		if r := v.rows[i]; r != nil && r.post.AuthorID != "" {
			missing = append(missing, r.post.AuthorID)
		}
	}
	var n int
	cmds, err := pipelined(ctx, v.r.rdb, func(p redis.Pipeliner) error {
		if n = v.locks.queue(ctx, p, v.r.keys, v.viewer, missing); n == 0 {
			return errNothingQueued
		}
		return nil
	})
	if err == errNothingQueued {
		return v.locks.read()
	}
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("read the locks of %d authors: %w", n, err)
	}
	return v.locks.read()
}
