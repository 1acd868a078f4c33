package redisstore

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// authorLocks is what a visibility check reads about the authors of its
// posts for the lock rule (social.AccessFacts.AuthorLocked): each
// author's locked flag, read from the profile hash (one HGET an author,
// never from the profile cache: it decides what a reader may see), and,
// for a signed-in viewer, whether the viewer follows each (one ZMSCORE of
// the viewer's Following a batch). The lock is a fact of the author, not
// of the post, so an account that locks or unlocks changes what readers
// see of all its posts at once, with nothing re-indexed.
type authorLocks struct {
	flags   map[string]*redis.StringCmd // author → HGET locked
	zms     []followRead
	follows map[string]bool // built by read
}

// followRead is one ZMSCORE of the viewer's Following for some authors.
type followRead struct {
	authors []string
	cmd     *redis.Cmd
}

// queue adds the reads of authors' locks not read yet (the viewer
// excepted, and "" for an author not known) to p.
func (l *authorLocks) queue(ctx context.Context, p redis.Pipeliner, k Keys, viewer string, authors []string) int {
	var fresh []string
	for _, a := range authors {
		if a == "" || a == viewer || !social.IsID(a) {
			continue
		}
		if _, ok := l.flags[a]; ok {
			continue
		}
		if l.flags == nil {
			l.flags = make(map[string]*redis.StringCmd, len(authors))
		}
		l.flags[a] = p.HGet(ctx, k.User(a), profileRecord.name("locked"))
		fresh = append(fresh, a)
	}
	if viewer != "" && len(fresh) > 0 {
		args := append([]any{"ZMSCORE", k.Following(viewer)}, toAny(fresh)...)
		l.zms = append(l.zms, followRead{authors: fresh, cmd: p.Do(ctx, args...)})
	}
	return len(fresh)
}

// read builds follows from the ZMSCOREs that ran.
func (l *authorLocks) read() error {
	for _, z := range l.zms {
		flags, err := zmscoreFlags(z.cmd)
		if err != nil {
			return fmt.Errorf("read follows of locked authors: %w", err)
		}
		if l.follows == nil {
			l.follows = make(map[string]bool, len(flags))
		}
		for i, a := range z.authors {
			l.follows[a] = i < len(flags) && flags[i]
		}
	}
	l.zms = nil
	return nil
}

// locked reports whether author is a locked account, as read.
func (l *authorLocks) locked(author string) bool {
	c := l.flags[author]
	return c != nil && c.Val() == "1"
}

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
