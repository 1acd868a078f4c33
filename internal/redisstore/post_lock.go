package redisstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// authorLocks is what a visibility check reads about the authors of its
// posts (authorflags.go): each one's flags, one HMGET of AuthorFlags a
// batch in the check's pipeline (never the profile cache: they decide
// what a reader may see), so the read follows the batch's authors, not
// how many accounts are flagged. A suspended account, or one deleted and
// being purged, has its posts, and plain reposts of them, read as
// missing (visibility.deleted); a locked account's posts are its
// followers' (social.AccessFacts.AuthorLocked): for a signed-in viewer
// and only for the authors that are locked, whether the viewer follows
// each is read too (followFlagsScript, one more round trip, only for a
// batch holding a locked author's post). Flagged accounts are few, so
// most pages pay one command for these rules. A flag is a fact of the
// author, not of the post, so an account that locks or unlocks, or is
// suspended, changes what readers see of all its posts at once, with
// nothing re-indexed.
type authorLocks struct {
	reads []flagRead
	// counted: a read of hiddenCount ran, which answered whether any
	// account at all is suspended or being purged (anyHidden).
	counted, anyHidden bool
	flags              map[string]authorFlags // built by read
	follows            map[string]bool        // built by readFollows
	seen               map[string]bool        // authors queued
	asked              map[string]bool        // locked authors whose follow was queued
	fcmd               *redis.Cmd             // the follow read queued (queueFollows)
	flagged            []string               // its authors
}

// flagRead is one batch of authors: HMGET of AuthorFlags, the first
// also of hiddenCount (count).
type flagRead struct {
	authors []string
	count   bool
	flags   *redis.SliceCmd
}

// queue adds the reads of authors' flags not read yet ("" for an author
// not known) to p.
func (l *authorLocks) queue(ctx context.Context, p redis.Pipeliner, k Keys, authors []string) int {
	var fresh []string
	for _, a := range authors {
		if a == "" || !social.IsID(a) || l.seen[a] {
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
	r := flagRead{authors: fresh, count: !l.counted && len(l.reads) == 0}
	fields := fresh
	if r.count {
		fields = append(slices.Clip(fresh), hiddenCount)
	}
	r.flags = p.HMGet(ctx, k.AuthorFlags(), fields...)
	l.reads = append(l.reads, r)
	return len(fresh)
}

// read takes in the replies of the flag reads that ran.
func (l *authorLocks) read() error {
	for _, r := range l.reads {
		vals, err := r.flags.Result()
		if err != nil {
			return fmt.Errorf("read the flags of %d authors: %w", len(r.authors), err)
		}
		if l.flags == nil {
			l.flags = make(map[string]authorFlags, len(r.authors))
		}
		for i, a := range r.authors {
			if i < len(vals) {
				f, _ := vals[i].(string)
				l.flags[a] = authorFlags(f)
			}
		}
		if r.count && len(vals) == len(r.authors)+1 {
			n, _ := vals[len(r.authors)].(string)
			l.counted, l.anyHidden = true, n != "" && n != "0"
		}
	}
	l.reads = nil
	return nil
}

// queueFollows queues whether viewer follows the locked authors read so
// far whose follow is not known yet, and returns how many.
func (l *authorLocks) queueFollows(ctx context.Context, p redis.Pipeliner, k Keys, viewer string) int {
	l.fcmd, l.flagged = nil, nil
	if viewer == "" {
		return 0
	}
	for a, f := range l.flags {
		if a != viewer && f.locked() && !l.asked[a] {
			l.flagged = append(l.flagged, a)
		}
	}
	if len(l.flagged) == 0 {
		return 0
	}
	l.fcmd = followFlagsScript.EvalSha(ctx, p, []string{k.Following(viewer)}, toAny(l.flagged)...)
	return len(l.flagged)
}

// readFollows takes in the reply of the follow read that ran.
func (l *authorLocks) readFollows() error {
	if l.fcmd == nil {
		return nil
	}
	follows, err := l.fcmd.Text()
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
	l.fcmd, l.flagged = nil, nil
	return nil
}

// locked reports whether author is a locked account, as read.
func (l *authorLocks) locked(author string) bool { return l.flags[author].locked() }

// hidden reports whether author's posts read as missing, as read: the
// account is suspended, or deleted and being purged.
func (l *authorLocks) hidden(author string) bool { return l.flags[author].hidden() }

// knownAuthors are the authors whose flags the posts' check needs, as
// known before their hashes arrive: each post's author from the hint
// (withAuthors), else the author the post cache holds (fixed, and checked
// against the hash by the read itself), and the original's author the
// cache holds for a repost (its plain reposts read as missing with it),
// so that a read of a post by id that this gateway read before knows
// them too.
func (v *visibility) knownAuthors() []string {
	out := make([]string, 0, len(v.ids))
	for i := range v.ids {
		if i < len(v.authors) && v.authors[i] != "" {
			out = append(out, v.authors[i])
		}
		if i < len(v.fixed) && v.fixed[i] != nil {
			out = append(out, cachedField(v.fixed[i], cachedAuthorAt), cachedField(v.fixed[i], cachedRauthorAt))
		}
	}
	return out
}

// cachedAuthorAt and cachedRauthorAt are where a post's author and its
// original's author stand among the fields the post cache keeps
// (postCachePlan), found once rather than with every post a check reads.
var (
	cachedAuthorAt  = postCachePlan.keptAt(postRecord.at("author"))
	cachedRauthorAt = postCachePlan.keptAt(postRecord.at("rauthor"))
)

// cachedField is the field at position j of a post's cached fixed fields
// ("" when absent).
func cachedField(fixed []any, j int) string {
	if j < 0 || j >= len(fixed) {
		return ""
	}
	s, _ := fixed[j].(string)
	return s
}

// settleLocks reads the flags of the authors the hashes named that
// neither a hint nor the post cache did, and of the originals' authors of
// plain reposts, but those only while some account is suspended or being
// purged (hiddenCount): one more round trip, only then. Then, for a
// signed-in viewer, whether they follow the locked ones (one more, only
// when there are any).
func (v *visibility) settleLocks(ctx context.Context) error {
	if err := v.locks.read(); err != nil {
		return err
	}
	var missing []string
	for i := range v.ids {
		if r := v.rows[i]; r != nil && r.post.AuthorID != "" {
			missing = append(missing, r.post.AuthorID)
			if plainRepost(&r.post) && (v.locks.anyHidden || !v.locks.counted) {
				missing = append(missing, r.post.RepostOfAuthorID)
			}
		}
	}
	if err := v.locksRound(ctx, "flags", func(p redis.Pipeliner) int {
		return v.locks.queue(ctx, p, v.r.keys, missing)
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
