package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// TagService reads tag pages (tagTimeline): the posts carrying a tag that
// a viewer may see, newest first.
type TagService struct {
	rdb  redis.UniversalClient
	keys Keys
	// pages is the page machinery every timeline shares: the visibility
	// check, screening, and what a page brings along (timeline_fetch.go).
	pages *TimelineService
}

// NewTagService returns the tag pages over the timelines' machinery.
func NewTagService(pages *TimelineService) *TagService {
	return &TagService{rdb: pages.rdb, keys: pages.keys, pages: pages}
}

// TagPage returns a page of the posts carrying tag that viewerID may see,
// newest first, with what w asks for.
//
// A round reads, in one pipeline, the tag's shared index (TagPosts) and,
// for a signed-in viewer, the viewer's own index of the ONLY_TO posts
// they may see (TagOnlyTo), both below the cursor, merged by id; on the
// first round with the set of authors the viewer blocked, muted or is
// blocked by. Those authors' posts are dropped unread, an anonymous
// viewer's NOT_TO ones too; a signed-in viewer's NOT_TO candidates are
// screened (post_screen.go: one round trip, only when there are any);
// the rest pass the visibility check with the page's extras (one round
// trip), which alone decides. Rounds and the read budget bound a page as
// they bound a home page, so its round trips do not grow with its size;
// a page cut short by them ends with HasNext and an End cursor where it
// stopped.
func (s *TagService) TagPage(ctx context.Context, viewerID, tag string, p social.PageRequest, w readplan.PageWants) (*readplan.Page, error) {
	tag, err := social.ValidateTag(tag)
	if err != nil {
		return nil, err
	}
	before, err := timelineCursor(p)
	if err != nil {
		return nil, err
	}
	f := s.pages.newPageFetch(viewerID, w, p.First)
	scan := &tagScan{viewer: viewerID, tag: tag, first: p.First, before: before}
	c, err := s.read(ctx, scan, f)
	if err != nil {
		return nil, err
	}
	return f.finish(ctx, c)
}

// tagScan is the state of reading one tag page.
type tagScan struct {
	viewer, tag string
	first       int
	before      int64           // the cursor: candidates below it are next
	hide        map[string]bool // authors the viewer blocked, muted or is blocked by
	exhausted   bool
	out         []*social.Post
}

// tagEntry is one member of a tag index.
type tagEntry struct {
	id     int64
	post   string
	author string
	notTo  bool
}

func (s *TagService) read(ctx context.Context, t *tagScan, f *pageFetch) (social.Connection[*social.Post], error) {
	for round := 0; round < pageRounds && !t.exhausted && len(t.out) <= t.first; round++ {
		n := candidates(t.first, round)
		if round > 0 {
			if n = social.TakeReadBudget(ctx, n); n == 0 {
				break
			}
		}
		entries, err := s.candidates(ctx, t, n, round)
		if err != nil {
			return social.Connection[*social.Post]{}, err
		}
		ids, authors, err := s.keep(ctx, t, entries)
		if err != nil {
			return social.Connection[*social.Post]{}, err
		}
		if round > 0 {
			f = nil // extras only for the first round's candidates (keepVisible)
		}
		posts, err := s.pages.set.postReader(s.rdb, s.keys).visibleIn(ctx, social.FilterPublic, t.viewer, ids, authors, f.along(authors))
		if err != nil {
			return social.Connection[*social.Post]{}, err
		}
		for _, post := range posts {
			if post != nil {
				t.out = append(t.out, post)
			}
		}
	}
	c := postPage(t.out, t.first, !t.exhausted)
	if !t.exhausted && len(t.out) <= t.first && t.before != noCursor {
		c.HasNext, c.End = true, postCursor(strconv.FormatInt(t.before, 10))
	}
	return c, nil
}

// candidates reads the next n entries below the cursor, merged from the
// viewer's indexes, and moves the cursor past them.
func (s *TagService) candidates(ctx context.Context, t *tagScan, n, round int) ([]tagEntry, error) {
	window := &redis.ZRangeBy{Max: "(" + strconv.FormatInt(t.before, 10), Min: "-inf", Count: int64(n)}
	var shared, own *redis.StringSliceCmd
	var hide *redis.StringSliceCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		shared = p.ZRevRangeByScore(ctx, s.keys.TagPosts(t.tag), window)
		if t.viewer != "" {
			own = p.ZRevRangeByScore(ctx, s.keys.TagOnlyTo(t.viewer, t.tag), window)
			if round == 0 {
				hide = p.SUnion(ctx, s.keys.Blocks(t.viewer), s.keys.BlockedBy(t.viewer), s.keys.Mutes(t.viewer))
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load posts of tag %q: %w", t.tag, err)
	}
	if hide != nil {
		t.hide = make(map[string]bool, len(hide.Val()))
		for _, u := range hide.Val() {
			t.hide[u] = true
		}
	}
	a := parseTagEntries(shared.Val())
	var b []tagEntry
	if own != nil {
		b = parseTagEntries(own.Val())
	}
	merged, all := mergeTagEntries(a, b, n)
	t.exhausted = len(a) < n && len(b) < n && all
	if len(merged) > 0 {
		t.before = merged[len(merged)-1].id
	}
	return merged, nil
}

// keep drops the entries the viewer may not see without reading them, and
// screens the NOT_TO ones; it returns the rest's ids and authors.
func (s *TagService) keep(ctx context.Context, t *tagScan, entries []tagEntry) (ids, authors []string, err error) {
	var screened []string
	for _, e := range entries {
		switch {
		case e.author == t.viewer:
		case t.hide[e.author]:
			continue
		case e.notTo && t.viewer == "":
			continue // anonymous readers see PUBLIC posts only
		case e.notTo:
			screened = append(screened, e.post)
		}
		ids, authors = append(ids, e.post), append(authors, e.author)
	}
	if len(screened) == 0 {
		return ids, authors, nil
	}
	keepIdx, err := s.pages.screen(ctx, t.viewer, screened)
	if err != nil {
		return nil, nil, err
	}
	drop := make(map[string]bool, len(screened))
	for _, id := range screened {
		drop[id] = true
	}
	for _, i := range keepIdx {
		delete(drop, screened[i])
	}
	n := 0
	for i := range ids {
		if !drop[ids[i]] {
			ids[n], authors[n] = ids[i], authors[i]
			n++
		}
	}
	return ids[:n], authors[:n], nil
}

// parseTagEntries reads tag index members ("<post>:<author>[:n]"); a
// malformed one is skipped.
func parseTagEntries(members []string) []tagEntry {
	out := make([]tagEntry, 0, len(members))
	for _, m := range members {
		parts := strings.Split(m, ":")
		if len(parts) < 2 || !social.IsID(parts[0]) || !social.IsID(parts[1]) {
			continue
		}
		id, _ := strconv.ParseInt(parts[0], 10, 64)
		out = append(out, tagEntry{id: id, post: parts[0], author: parts[1], notTo: len(parts) > 2 && parts[2] == "n"})
	}
	return out
}

// mergeTagEntries merges two lists of entries, each newest first, into
// the n newest of both, without repeats: each list holds the newest
// entries of its index below the cursor, so the n newest of the two are
// the n newest of both indexes. all reports that both lists were taken
// whole.
func mergeTagEntries(a, b []tagEntry, n int) (merged []tagEntry, all bool) {
	out := make([]tagEntry, 0, min(n, len(a)+len(b)))
	i, j := 0, 0
	for len(out) < n && (i < len(a) || j < len(b)) {
		var e tagEntry
		if j >= len(b) || (i < len(a) && a[i].id >= b[j].id) {
			e, i = a[i], i+1
		} else {
			e, j = b[j], j+1
		}
		if len(out) > 0 && out[len(out)-1].id == e.id {
			continue
		}
		out = append(out, e)
	}
	return out, i == len(a) && j == len(b)
}
