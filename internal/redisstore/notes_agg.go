package redisstore

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// Aggregated notifications read from their source.
//
// The likes of one post and the follows of a user are read, not copied:
// the post's Likers and the user's Followers are zsets scored by when each
// user acted, so a notification of them keeps only its window, a range of
// those scores (noteAggScript), and its actors and their count are that
// range of the source when it is read, less the users the recipient is not
// told of (blocks either way, mutes). However many users act, the
// recipient's notification keeps a fixed-size entry, and an undone action
// (an unlike, an unfollow) leaves its actors with the source's write. A
// window left without actors is dropped by the worker (checkWindows).

// noteExcludedCap is how many users of each of a recipient's Blocks,
// BlockedBy and Mutes sets the reads of aggregated notifications leave out
// of actors and counts: one beyond it in a larger set can be counted, but
// is not shown (hideUnlisted).
const noteExcludedCap = 1000

// fromSource reports whether notifications of kind are read from their
// source (noteAggScript) rather than keeping their actors (noteScript).
func fromSource(kind social.NoteKind) bool {
	return kind == social.NoteLike || kind == social.NoteFollow
}

// noteWindow is an aggregated notification's range of its source.
type noteWindow struct {
	gid, act string
	key      string // the source zset
	lo, hi   string // scores; hi "" for none
}

// parseWindow reads a notification's window of its source for
// recipient; ok is false for a notification that keeps its actors.
func (k Keys) parseWindow(recipient string, row *noteRow) (noteWindow, bool) {
	if row.lo == "" {
		return noteWindow{}, false
	}
	w := noteWindow{lo: row.lo, hi: row.hi}
	switch row.note.Kind {
	case social.NoteLike:
		w.key = k.Likers(row.note.PostID)
	case social.NoteFollow:
		w.key = k.Followers(recipient)
	default:
		return noteWindow{}, false
	}
	return w, true
}

// windowRead is the replies of queueWindow.
type windowRead struct {
	count *redis.IntCmd
	top   *redis.StringSliceCmd
	excl  *redis.FloatSliceCmd
}

// queueWindow queues reading a window's actor count and its first n actors
// (newest first), reading n more than asked for each excluded user.
func queueWindow(ctx context.Context, p redis.Pipeliner, w noteWindow, excl []string, n int) *windowRead {
	top := "+inf"
	if w.hi != "" {
		top = "(" + w.hi
	}
	r := &windowRead{count: p.ZCount(ctx, w.key, w.lo, top)}
	if n > 0 {
		r.top = p.ZRevRangeByScore(ctx, w.key, &redis.ZRangeBy{Max: top, Min: w.lo, Count: int64(n + len(excl))})
	}
	if len(excl) > 0 {
		r.excl = p.ZMScore(ctx, w.key, excl...)
	}
	return r
}

// result is the window's actor count and first n actors, without the
// excluded users.
func (r *windowRead) result(w noteWindow, ex excluded, n int) (int, []string) {
	count := int(r.count.Val())
	if r.excl != nil {
		lo, _ := strconv.ParseFloat(w.lo, 64)
		hi, err := strconv.ParseFloat(w.hi, 64)
		for _, sc := range r.excl.Val() {
			if sc != 0 && sc >= lo && (err != nil || sc < hi) {
				count--
			}
		}
	}
	var actors []string
	if r.top != nil {
		for _, a := range r.top.Val() {
			if len(actors) < n && !ex.set[a] {
				actors = append(actors, a)
			}
		}
	}
	return max(count, 0), actors
}

// excluded is the users a recipient is not told of: themselves and those
// a note script listed (blocks either way, mutes; up to noteExcludedCap of
// each set), each once.
type excluded struct {
	ids  []string
	set  map[string]bool
	more bool // a set held more than were listed
}

func excludedFor(recipient string, listed []string, more bool) excluded {
	ex := excluded{ids: []string{recipient}, set: map[string]bool{recipient: true}, more: more}
	for _, u := range listed {
		if !ex.set[u] {
			ex.set[u] = true
			ex.ids = append(ex.ids, u)
		}
	}
	return ex
}

// hideUnlisted adds to ex the candidate actors of reads that are in a
// block with recipient or muted by them but were not listed (their set
// held more than noteExcludedCap): one pipeline, run only then, so that no
// such actor is shown (their count is not corrected).
func (s *NotificationService) hideUnlisted(ctx context.Context, recipient string, reads map[int]*windowRead, ex excluded) error {
	var cands []any
	for _, r := range reads {
		for _, a := range r.top.Val() {
			if !ex.set[a] {
				cands = append(cands, a)
			}
		}
	}
	if len(cands) == 0 {
		return nil
	}
	k := s.keys
	var in [3]*redis.BoolSliceCmd
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, key := range []string{k.Blocks(recipient), k.BlockedBy(recipient), k.Mutes(recipient)} {
			in[i] = p.SMIsMember(ctx, key, cands...)
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("check the actors of %s's notifications: %w", recipient, err)
	}
	for _, c := range in {
		for j, hit := range c.Val() {
			if hit {
				ex.set[cands[j].(string)] = true
			}
		}
	}
	return nil
}

// readWindows fills the actors and counts of a page's aggregated
// notifications from their sources (one pipeline; none when the page has
// none) and leaves out those found without actors (an undo whose job the
// worker has yet to run: checkWindows drops them).
func (s *NotificationService) readWindows(ctx context.Context, recipient string, notes []*social.Notification, windows map[int]noteWindow, ex excluded, n int) ([]*social.Notification, error) {
	if len(windows) == 0 {
		return notes, nil
	}
	reads := make(map[int]*windowRead, len(windows))
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, w := range windows {
			reads[i] = queueWindow(ctx, p, w, ex.ids, n)
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return nil, fmt.Errorf("read the actors of %s's notifications: %w", recipient, err)
	}
	if ex.more && n > 0 {
		if err := s.hideUnlisted(ctx, recipient, reads, ex); err != nil {
			return nil, err
		}
	}
	out := notes[:0]
	for i, note := range notes {
		if r, ok := reads[i]; ok {
			note.ActorsCount, note.Actors = r.result(windows[i], ex, n)
			if note.ActorsCount == 0 {
				continue
			}
		}
		out = append(out, note)
	}
	return out, nil
}

// checkWindows drops recipient's aggregated notifications of groups (all
// of them when none is given) that their source has no actor left in:
// after an undo, a block or a mute, or a window cut short by a newer one.
// A notification that rose since it was read is kept (noteDropScript).
func (s *FanoutService) checkWindows(ctx context.Context, r string, groups ...string) error {
	k := s.keys
	args := append([]any{noteExcludedCap}, fieldArgs(groups...)...)
	res, err := noteWindowsScript.Run(ctx, s.rdb, []string{k.Notes(r), k.NoteData(r), k.NoteOpen(r), k.Blocks(r), k.BlockedBy(r), k.Mutes(r)}, args...).Slice()
	if err != nil || len(res) != 2 {
		return fmt.Errorf("read the windows of %s's notifications: %v %w", r, res, err)
	}
	ex := excludedFor(r, strs(res[0]), false)
	rows := strs(res[1])
	var windows []noteWindow
	for i := 0; i+2 < len(rows); i += 3 {
		var row noteRow
		noteRecord.unpack(&row, rows[i+2])
		if w, ok := k.parseWindow(r, &row); ok {
			w.gid, w.act = rows[i], rows[i+1]
			windows = append(windows, w)
		}
	}
	if len(windows) == 0 {
		return nil
	}
	reads := make([]*windowRead, len(windows))
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, w := range windows {
			reads[i] = queueWindow(ctx, p, w, ex.ids, 0)
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("count the actors of %s's notifications: %w", r, err)
	}
	drop := []any{k.NoteActors(r, "")}
	for i, w := range windows {
		if n, _ := reads[i].result(w, ex, 0); n == 0 {
			drop = append(drop, w.gid, w.act)
		}
	}
	if len(drop) == 1 {
		return nil
	}
	if err := noteDropScript.Run(ctx, s.rdb, []string{k.Notes(r), k.NoteData(r), k.NoteOpen(r)}, drop...).Err(); err != nil {
		return fmt.Errorf("drop notifications of %s without actors: %w", r, err)
	}
	return nil
}
