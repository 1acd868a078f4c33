package redisstore

import (
	"context"
	"fmt"
	"strings"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// A list's timeline is fanned out at write time, as home lists are: the
// fan-out job of a post puts it into ListFeed of every list its author is
// in (deliverToLists), so a page reads one zset in the owner's slot,
// whatever the number of members, and its cost follows the page. A page
// is then read as a home page is: listPageScript (entries below or above
// the cursor, muted authors left out, the list checked to be the
// owner's), then the posts' visibility check with what the query asks
// for, then stage 3 of the page fetch: three round trips, more only when
// hidden posts leave a round short.

// ListPage returns a page of ownerID's list lid, newest first, with what
// w asks for: older than p.After, or (p.Before) the posts newer than it
// nearest first, returned newest first, HasPrevious telling whether still
// newer ones exist.
func (s *CurationService) ListPage(ctx context.Context, ownerID, lid string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error) {
	if !social.IsID(lid) {
		return nil, social.ListNotFound(lid)
	}
	newer := p.Before != ""
	cur := p.After
	if newer {
		cur = p.Before
	}
	at, err := timelineCursor(social.PageRequest{First: p.First, After: cur})
	if err != nil {
		return nil, err
	}
	src := &listSource{s: s, owner: ownerID, lid: lid, newer: newer}
	if at != noCursor {
		src.pos = fmt.Sprint(at)
	}
	if !newer {
		return s.readPage(ctx, social.FilterLists, ownerID, p.First, w, src)
	}
	page, err := s.readPage(ctx, social.FilterLists, ownerID, p.First, w, src)
	if err != nil {
		return nil, err
	}
	flipNewer(&page.Posts)
	return page, nil
}

// flipNewer turns a page read upwards (oldest first, nearest the cursor
// first) into a newer page: newest first, HasPrevious where the read
// could go on, and no HasNext (the older side is where the client came
// from).
func flipNewer(c *social.Connection[*social.Post]) {
	c.HasPrevious, c.HasNext = c.HasNext, false
	c.Start, c.End = c.End, ""
	for i, j := 0, len(c.Items)-1; i < j; i, j = i+1, j-1 {
		c.Items[i], c.Items[j] = c.Items[j], c.Items[i]
		c.Cursors[i], c.Cursors[j] = c.Cursors[j], c.Cursors[i]
	}
}

// listSource reads a list's feed from a position, round by round.
type listSource struct {
	s          *CurationService
	owner, lid string
	newer      bool
	pos        string // the last post id read; "" the start
}

func (l *listSource) next(ctx context.Context, n int) (ids, authors, cursors []string, exhausted bool, err error) {
	k := l.s.keys
	newer := ""
	if l.newer {
		newer = "1"
		if l.pos == "" {
			l.pos = "0"
		}
	}
	res, err := listPageScript.Run(ctx, l.s.rdb, []string{k.Lists(l.owner), k.ListFeed(l.owner, l.lid), k.Mutes(l.owner)}, l.lid, l.pos, n, newer).Slice()
	if isNil(err) {
		return nil, nil, nil, false, social.ListNotFound(l.lid)
	}
	if err != nil || len(res) != 3 {
		return nil, nil, nil, false, fmt.Errorf("read list %s: %w %v", l.lid, err, res)
	}
	rows, _ := res[1].([]any)
	for _, r := range rows {
		e, _ := r.(string)
		post, author, ok := strings.Cut(e, ":")
		if ok {
			ids, authors, cursors = append(ids, post), append(authors, author), append(cursors, postCursor(post))
		}
	}
	if last, _ := res[2].(string); last != "" {
		l.pos, _, _ = strings.Cut(last, ":")
	}
	done, _ := res[0].(int64)
	return ids, authors, cursors, done == 1, nil
}
