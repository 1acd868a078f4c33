package redisstore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/socialgw/gateway/internal/social"
)

// homeTTL is the TTL (ms) of home lists and marks: InactiveAfter in hybrid
// mode, none (0) in the others.
func (c FeedConfig) homeTTL() int64 {
	if c.Mode == Hybrid {
		return c.InactiveAfter.Milliseconds()
	}
	return 0
}

// homeKeys are the keys of u's home scripts, in the order they name them.
func homeKeys(k Keys, u string) []string {
	return []string{k.Home(u), k.HomeMark(u), k.Following(u), k.Mutes(u), k.CelebFollowing(u)}
}

// listRound is the reply of homePageScript.
type listRound struct {
	need      string // "", "rebuild" or "pull"
	followees []string
	marks     [3]int64 // pull, pullprev, pullat
	floor     int64
	exhausted bool
	entries   []homeItem
	pulled    []string
	above     []homeItem // the fold window's entries above the cursor (timeline_fold.go)
	bottom    int64
}

// firstListRound runs a page's first list read, queued by queue, filling
// the list first when the read says it must (a hybrid reader back from
// inactivity, or pull mode); after one fill it does not ask again, the
// limit is a guard. Downward and upward pages share it.
func (s *TimelineService) firstListRound(ctx context.Context, viewer string, queue func(p redis.Pipeliner, mayPull bool) *redis.Cmd) (*listRound, error) {
	for fills := 0; ; fills++ {
		var cmd *redis.Cmd
		if _, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
			cmd = queue(p, fills == 0)
			return nil
		}); err != nil {
			return nil, err
		}
		r, err := parseListRound(cmd)
		if err != nil {
			return nil, err
		}
		switch {
		case r.need == "":
			return r, nil
		case fills == 2:
			return nil, fmt.Errorf("home list still needs a %s after filling it", r.need)
		}
		if err := s.fillHome(ctx, viewer, r); err != nil {
			return nil, err
		}
	}
}

// errNothingQueued ends a pipeline function that had nothing to send.
var errNothingQueued = errors.New("nothing queued")

// parseListRound reads a homePageScript reply.
func parseListRound(c *redis.Cmd) (*listRound, error) {
	res, err := c.Slice()
	if err != nil {
		return nil, fmt.Errorf("read home list: %w", err)
	}
	bad := fmt.Errorf("read home list: unexpected reply %v", res)
	if len(res) < 5 {
		return nil, bad
	}
	tag, _ := res[0].(string)
	r := &listRound{}
	switch tag {
	case "rebuild", "pull":
		r.need = tag
		r.followees = strs(res[1])
		for i := range r.marks {
			s, _ := res[2+i].(string)
			r.marks[i], _ = strconv.ParseInt(s, 10, 64)
		}
		return r, nil
	case "ok":
		if len(res) < 6 {
			return nil, bad
		}
		r.floor, _ = res[1].(int64)
		ex, _ := res[2].(int64)
		r.exhausted = ex == 1
		r.entries = parseEntries(strs(res[3]))
		r.pulled = strs(res[4])
		if f := strs(res[5]); len(f) > 0 {
			r.followees = f
		}
		if len(res) >= 8 {
			r.above = parseEntries(strs(res[6]))
			r.bottom, _ = res[7].(int64)
		}
		return r, nil
	}
	return nil, bad
}

// parseEntries reads home-list entries, leaving out malformed ones.
func parseEntries(es []string) []homeItem {
	var out []homeItem
	for _, e := range es {
		if it, ok := parseEntry(e); ok {
			out = append(out, it)
		}
	}
	return out
}

// parseEntry reads a home-list entry "<post>:<author>".
func parseEntry(e string) (homeItem, bool) {
	post, author, ok := strings.Cut(e, ":")
	id, err := strconv.ParseInt(post, 10, 64)
	if !ok || err != nil {
		return homeItem{}, false
	}
	return homeItem{id: id, author: author}, true
}

// pullGrace is how long a post may take from its id (INCR) to its place in
// its author's timeline (ZADD) and still be caught by pull mode: a pull
// starts from the mark of a pull at least this old, so a post whose id is
// below the newest mark but which arrived just after that pull is read by
// the next one.
const pullGrace = 5 * time.Second

// fillHome rebuilds or pulls viewer's home list from the own timelines of
// the users they follow (and their own): the newest HomeCap posts of each
// for a rebuild, those newer than the pull mark for a pull, as viewer may
// see them (queueAuthorWindow: posts addressed only to others are not
// read). It costs one pipeline (one read per followee) and one merge
// script.
func (s *TimelineService) fillHome(ctx context.Context, viewer string, r *listRound) error {
	from := int64(0)
	if r.need == "pull" {
		from = r.marks[1]
	}
	authors := append(slices.Clip(r.followees), viewer)
	cmds := make([]*authorRead, len(authors))
	cap := s.set.feed.HomeCap
	_, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		for i, a := range authors {
			cmds[i] = queueAuthorWindow(ctx, p, s.keys, a, viewer, authorWindow{
				from: "+inf", to: "(" + strconv.FormatInt(from, 10), count: cap, newestFirst: true,
			})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pull followees' posts: %w", err)
	}
	var entries []any
	seen, cut := int64(0), int64(0)
	for i, c := range cmds {
		ids := c.Val()
		for _, id := range ids {
			entries = append(entries, homeEntry(id, authors[i]))
		}
		if len(ids) > 0 {
			n, _ := strconv.ParseInt(ids[0], 10, 64)
			seen = max(seen, n)
		}
		if len(ids) == cap {
			// This author may have more: the list is complete only down to
			// the oldest post read from them.
			n, _ := strconv.ParseInt(ids[len(ids)-1], 10, 64)
			cut = max(cut, n)
		}
	}
	mode, floor := "max", int64(0) // a pull that was not cut keeps the floor
	if cut > 0 {
		mode, floor = "set", cut
	} else if from == 0 {
		mode = "set" // a complete rebuild: the list holds everything
	}
	marks := []any{"-", "", ""}
	if s.set.feed.Mode == Pull {
		now := s.set.now().UnixMilli()
		pull, prev, at := r.marks[0], r.marks[1], r.marks[2]
		if now-at >= pullGrace.Milliseconds() {
			prev, at = pull, now
		}
		marks = []any{max(pull, seen), prev, at}
	}
	args := append([]any{viewer, cap, mode, floor, "1"}, append(marks, s.set.feed.homeTTL())...)
	err = homeMergeScript.Run(ctx, s.rdb, homeKeys(s.keys, viewer)[:4], append(args, entries...)...).Err()
	if err != nil {
		return fmt.Errorf("fill home list: %w", err)
	}
	return nil
}

// homeEntry is the home-list entry of a post.
func homeEntry(postID, authorID string) string { return postID + ":" + authorID }

// pullSource is one author's own timeline read at read time, as the
// reader may see it (queueAuthorWindow).
type pullSource struct {
	author string
	cmd    *authorRead
	done   bool
}

// homeItem is a home-list entry.
type homeItem struct {
	id     int64
	author string
}

// takePulled appends to items what each pulled source's read brought (k
// ids asked for), marks a source whose read came back short as done, and
// tells reached the last id of each source that may hold more: how far
// the round got, in either direction.
func takePulled(items []homeItem, sources []*pullSource, k int, reached func(last int64)) []homeItem {
	for _, src := range sources {
		if src.cmd == nil {
			continue
		}
		ids := src.cmd.Val()
		for _, id := range ids {
			v, _ := strconv.ParseInt(id, 10, 64)
			items = append(items, homeItem{id: v, author: src.author})
		}
		if len(ids) < k {
			src.done = true
		} else {
			reached(items[len(items)-1].id)
		}
		src.cmd = nil
	}
	return items
}

// openReads is how many sources a read round reads, downwards or upwards:
// the home list unless it is done with, and every pulled timeline not yet
// exhausted; at least one.
func openReads(listDone bool, sources []*pullSource) int {
	n := 0
	if !listDone {
		n++
	}
	for _, src := range sources {
		if !src.done {
			n++
		}
	}
	return max(n, 1)
}

// fold reports whether p tells a story already on the page, newer: a
// post and its plain reposts are one story, shown once, as its newest
// entry (across pages too: storyFold, timeline_fold.go). Folded posts are passed over like hidden ones, so the page still
// has first posts, and its cursors are those of the posts shown. A repost
// with text of its own is a post of its own.
// size is a hint: about how many stories the page shows.
func (s *stories) fold(p *social.Post, size int) bool {
	story := p.ID
	if p.Plain() {
		story = p.RepostOfID
	}
	if (*s)[story] {
		return true
	}
	if *s == nil {
		*s = make(stories, size)
	}
	(*s)[story] = true
	return false
}

// stories are the stories on a page: the posts shown, by the id of the
// post a plain repost reposts (see fold).
type stories map[string]bool
