package redisstore

import (
	"context"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Keyword filters: Filters(u) holds u's filters, one packed value each
// (filterRecord). Writes go through filterWriteScript, which also drops
// the expired ones; reads skip expired filters at once, so an expiry
// takes effect without a write.
//
// The page readers read the viewer's filters with their first visibility
// check (viewerFilters, one HGETALL in that pipeline: no round trip of its
// own) and keep the compiled matcher for the rest of the operation
// (social.KeepMatcher), so an operation compiles each viewer's filters
// once and its later pages read nothing more of them.

var filterWriteScript = newScript("filter_write.lua")

// FilterService adds, removes and lists users' keyword filters.
type FilterService struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
}

// NewFilterService returns the filter service over db.
func NewFilterService(db *DB) *FilterService {
	return &FilterService{rdb: db.rdb, keys: db.keys, set: db.set}
}

// AddFilter adds a filter of userID, at most social.MaxFilters that have
// not expired. Bad input and a filter past the cap write nothing.
func (s *FilterService) AddFilter(ctx context.Context, userID string, in social.FilterInput) (*social.Filter, error) {
	now := s.set.now()
	f, err := social.CheckFilter(in, now)
	if err != nil {
		return nil, err
	}
	// Refuse before taking an id: a refused filter leaves nothing.
	have, err := s.Filters(ctx, userID)
	if err != nil {
		return nil, err
	}
	if len(have) >= social.MaxFilters {
		return nil, social.TooManyFilters()
	}
	id, err := s.rdb.Incr(ctx, s.keys.FilterSeq()).Result()
	if err != nil {
		return nil, fmt.Errorf("add filter: %w", err)
	}
	f.ID = strconv.FormatInt(id, 10)
	n, err := s.write(ctx, userID, "add", f.ID, filterRecord.pack(&filterRow{f: f}), now)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, social.TooManyFilters()
	}
	social.ForgetMatcher(ctx, userID)
	return &f, nil
}

// RemoveFilter removes one of userID's filters; any other id, another
// user's filter's too, is NOT_FOUND.
func (s *FilterService) RemoveFilter(ctx context.Context, userID, id string) error {
	if !social.IsID(id) {
		return social.FilterNotFound(id)
	}
	n, err := s.write(ctx, userID, "remove", id, "", s.set.now())
	if err != nil {
		return err
	}
	if n == 0 {
		return social.FilterNotFound(id)
	}
	social.ForgetMatcher(ctx, userID)
	return nil
}

func (s *FilterService) write(ctx context.Context, userID, op, id, packed string, now time.Time) (int, error) {
	n, err := filterWriteScript.Run(ctx, s.rdb, []string{s.keys.Filters(userID)}, op, id, packed, now.UnixMilli(), social.MaxFilters).Int()
	if err != nil {
		return 0, fmt.Errorf("%s filter %s of %s: %w", op, id, userID, err)
	}
	return n, nil
}

// Filters returns userID's filters that have not expired, oldest first.
func (s *FilterService) Filters(ctx context.Context, userID string) ([]social.Filter, error) {
	m, err := s.rdb.HGetAll(ctx, s.keys.Filters(userID)).Result()
	if err != nil {
		return nil, fmt.Errorf("read the filters of %s: %w", userID, err)
	}
	return decodeFilters(m, s.set.now()), nil
}

// decodeFilters reads Filters' entries, leaving out those expired at now,
// oldest first.
func decodeFilters(m map[string]string, now time.Time) []social.Filter {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	out := make([]social.Filter, 0, len(ids))
	for _, id := range sortIDs(ids) {
		var r filterRow
		filterRecord.unpack(&r, m[id])
		r.f.ID = id
		if r.f.ActiveAt(now) {
			out = append(out, r.f)
		}
	}
	return out
}

// viewerFilters is the read of a viewer's filters that joins a page's
// visibility check: queue adds HGETALL of Filters unless the operation
// already holds the viewer's matcher; matcher compiles what it read, once
// an operation. Every page's check reads them, whatever its context, so
// that what a page brings along (first comments) finds the matcher known.
type viewerFilters struct {
	viewer string
	cmd    *redis.MapStringStringCmd
	m      *social.Matcher
	known  bool
}

// newViewerFilters is the filters of viewerID ("": anonymous, none);
// read false reads nothing and finds none.
func newViewerFilters(ctx context.Context, viewerID string, read bool) *viewerFilters {
	f := &viewerFilters{viewer: viewerID}
	if viewerID == "" || !read {
		f.known = true
		return f
	}
	f.m, f.known = social.OperationMatcher(ctx, viewerID)
	return f
}

func (f *viewerFilters) queue(ctx context.Context, p redis.Pipeliner, k Keys) {
	if !f.known {
		f.cmd = p.HGetAll(ctx, k.Filters(f.viewer))
	}
}

// matcher is the viewer's matcher once queue's read ran (nil: no filter).
func (f *viewerFilters) matcher(ctx context.Context, now time.Time) *social.Matcher {
	if !f.known && f.cmd != nil {
		f.m, f.known = social.NewMatcher(decodeFilters(f.cmd.Val(), now), now), true
		social.KeepMatcher(ctx, f.viewer, f.m)
	}
	return f.m
}

// postText is what a filter matches of a post: its text, its original
// (a repost's text is its original's) and its author, which tells it
// exists.
var postText = postRecord.view("author", "content", "repost", "spoiler")

// postTexts is a read of posts' text (postText) joined to a pipeline; a
// nil *postTexts reads nothing.
type postTexts struct {
	ids  []string
	cmds []*redis.SliceCmd
}

// cachedOriginals is the read of the originals of those of ids the post
// cache knows as reposts (nil when none is).
func (r postReader) cachedOriginals(ids []string) *postTexts {
	var t *postTexts
	for _, id := range ids {
		if !social.IsID(id) {
			continue
		}
		if kept, ok := r.cache.Get(r.keys.Post(id)); ok {
			if orig, _ := keptStory(kept); orig != "" && social.IsID(orig) {
				if t == nil {
					t = &postTexts{}
				}
				t.ids = append(t.ids, orig)
			}
		}
	}
	return t
}

func (t *postTexts) queue(ctx context.Context, p redis.Pipeliner, k Keys) {
	if t == nil {
		return
	}
	t.cmds = make([]*redis.SliceCmd, len(t.ids))
	for i, id := range t.ids {
		t.cmds[i] = postText.queue(ctx, p, k.Post(id))
	}
}

// read is the posts the read found, by id (nil for a nil t).
func (t *postTexts) read() map[string]*social.Post {
	if t == nil {
		return nil
	}
	out := make(map[string]*social.Post, len(t.ids))
	for i, id := range t.ids {
		var row postRow
		postText.decode(&row, t.cmds[i].Val())
		if row.post.AuthorID != "" {
			row.post.ID = id
			out[id] = &row.post
		}
	}
	return out
}

// readTexts reads the text of posts ids into byID, with one pipeline
// (only what a filter matches: an HMGET of four fields a post).
func (r postReader) readTexts(ctx context.Context, ids []string, byID map[string]*social.Post) error {
	t := &postTexts{ids: ids}
	_, err := r.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		t.queue(ctx, p, r.keys)
		return nil
	})
	if err != nil {
		return fmt.Errorf("read the text of %d posts: %w", len(ids), err)
	}
	maps.Copy(byID, t.read())
	return nil
}

// dropFiltered sets to nil each post of posts that m hides in context in:
// its content or spoiler text, or, for a repost, its original's. The
// viewer's own posts stay. Originals neither in posts nor in known (read
// already) are read with one pipeline (readTexts), only when a repost's
// own text did not match.
func (r postReader) dropFiltered(ctx context.Context, m *social.Matcher, in social.FilterContext, viewerID string, posts []*social.Post, known map[string]*social.Post) ([]*social.Post, error) {
	byID := make(map[string]*social.Post, len(posts)+len(known))
	maps.Copy(byID, known)
	for _, p := range posts {
		if p != nil {
			byID[p.ID] = p
		}
	}
	var reposts []int
	var origIDs []string
	for i, p := range posts {
		switch {
		case p == nil || p.AuthorID == viewerID:
		case m.MatchPost(in, p, nil):
			posts[i] = nil
		case p.RepostOfID != "":
			reposts = append(reposts, i)
			if byID[p.RepostOfID] == nil {
				origIDs = append(origIDs, p.RepostOfID)
			}
		}
	}
	if len(reposts) == 0 {
		return posts, nil
	}
	if len(origIDs) > 0 {
		if err := r.readTexts(ctx, origIDs, byID); err != nil {
			return nil, err
		}
	}
	for _, i := range reposts {
		if m.MatchPost(in, &social.Post{}, byID[posts[i].RepostOfID]) {
			posts[i] = nil
		}
	}
	return posts, nil
}

// hiddenComment reports whether m hides comment c from viewerID in
// COMMENTS (their own comments stay).
func hiddenComment(m *social.Matcher, viewerID string, c *social.Comment) bool {
	return c.AuthorID != viewerID && m.Match(social.FilterComments, c.Content)
}

// keptComments appends to out the comments of c that m does not hide.
func keptComments(out social.Connection[*social.Comment], m *social.Matcher, viewerID string, c social.Connection[*social.Comment]) social.Connection[*social.Comment] {
	for i, cm := range c.Items {
		if !hiddenComment(m, viewerID, cm) {
			out.Items, out.Cursors = append(out.Items, cm), append(out.Cursors, c.Cursors[i])
		}
	}
	return out
}

// filteredComments is a page of comments (k) without those m hides,
// still full: while fewer than one more than the page are kept and the
// list goes on, it reads on from the last comment read, spending the
// operation's read budget, at most pageRounds reads. A page the budget
// cuts short ends at the last comment read (End), as timelines do.
func (s *TimelineService) filteredComments(ctx context.Context, m *social.Matcher, viewerID string, k readplan.ListKey, c social.Connection[*social.Comment]) (social.Connection[*social.Comment], error) {
	first := k.Page.First
	kept := keptComments(social.Connection[*social.Comment]{Total: c.Total}, m, viewerID, c)
	more, last := c.HasNext, c.EndCursor()
	for round := 1; more && len(kept.Items) <= first && round < pageRounds; round++ {
		n := social.TakeReadBudget(ctx, candidates(first-len(kept.Items), 0))
		if n == 0 {
			break
		}
		next := k
		next.Page = social.PageRequest{First: min(n, social.MaxFirst), After: last}
		pg, err := listPage(ctx, s.rdb, s.keys, viewerID, next)
		if err != nil {
			return c, err
		}
		kept = keptComments(kept, m, viewerID, pg.Comments)
		more, last = pg.Comments.HasNext, pg.Comments.EndCursor()
	}
	out := social.Connection[*social.Comment]{Total: c.Total, HasNext: len(kept.Items) > first || more}
	out.Items, out.Cursors = kept.Items[:min(first, len(kept.Items))], kept.Cursors[:min(first, len(kept.Items))]
	if len(kept.Items) <= first && more {
		out.End = last
	}
	return out, nil
}

// filteredFirstComments is the first comments a page brought along for a
// post without those m hides; false when it hid one and more exist
// (Post.comments then reads its page through ListPages, which reads on).
func filteredFirstComments(m *social.Matcher, viewerID string, c social.Connection[*social.Comment]) (social.Connection[*social.Comment], bool) {
	if !m.Applies(social.FilterComments) {
		return c, true
	}
	kept := keptComments(social.Connection[*social.Comment]{Total: c.Total, HasNext: c.HasNext}, m, viewerID, c)
	if len(kept.Items) == len(c.Items) {
		return c, true
	}
	return kept, !c.HasNext
}
