package redisstore

import (
	"context"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/rcache"
	"github.com/socialgw/gateway/internal/social"
)

// The fold: a post and its plain reposts are one story, which a home
// timeline shows once, as its newest entry, over pages as within one.
//
// Fan-out writes every entry, and the fold happens at read time, so an
// older entry comes back at its place when the newer one goes (its
// reposter unfollowed or muted, the repost deleted), in every mode
// alike: the pulled authors' posts, which no list holds, fold as the
// listed ones do.
//
// A page folds its candidates against the newer entries on the page (as
// they are checked) and against the fold window's entries above the page:
// the first list round of a page that has a cursor returns the allowed
// entries among the list's newest foldWindow that are above the cursor,
// and the id of the foldWindow-th (bottom); the pulled authors' posts
// above the cursor and at or above bottom are read with the page's first
// read of their timelines. Only a plain repost can fold an older entry
// (an original is older than each of its reposts), so the page learns
// which of those entries are plain reposts, and of what: from the post
// cache's fixed fields when it holds them (an entry above was checked on
// an earlier page, so it usually does), else by an HMGET of the fixed
// fields, queued with the page's first visibility check, which fills the
// cache for the next pages. A plain repost taken from the cache is asked
// only whether it still exists (HGET of its author). A candidate is then
// folded when a plain repost of its story newer than it is among those
// entries. No round trip is added: the list reply, the pulled reads and
// the story reads ride on the page's own.
//
// A downward page further down than the window reads no entries above:
// what it reads is beyond the fold, and folds only within the page. A
// quote is a post of its own.

// foldWindow is how many of a home list's newest entries the fold covers.
const foldWindow = 200

// storyFold is what a page knows of the fold window's entries above it.
type storyFold struct {
	keys   Keys
	cache  *rcache.Cache[[]any] // the post cache (postcache.go; nil: off)
	above  []homeItem           // the list's, then the pulled authors'
	bottom int64                // the foldWindow-th list entry's id (the floor when shorter)
	pulled []*pullSource

	fixed  []*redis.SliceCmd  // the fixed fields, for an entry not cached
	exists []*redis.StringCmd // author, for a cached plain repost
	story  []string           // a cached entry's original ("": not a plain repost)

	resolved bool
	newest   map[string]int64 // story -> its newest plain repost above
}

func newStoryFold(keys Keys, cache *rcache.Cache[[]any], r *listRound) *storyFold {
	return &storyFold{keys: keys, cache: cache, above: r.above, bottom: r.bottom}
}

// queuePulled queues the reads of the pulled authors' posts above the
// cursor (downwards, the cursor's own post too) and at or above bottom,
// as reader may see them (the reader's index: a repost hidden from the
// reader folds nothing). A downward page at or below bottom (or the
// first page) needs none.
func (f *storyFold) queuePulled(ctx context.Context, p redis.Pipeliner, reader string, authors []string, cursor int64, newer bool) {
	f.pulled = nil
	lo := ""
	switch {
	case newer && cursor >= f.bottom:
		lo = "(" + strconv.FormatInt(cursor, 10)
	case newer:
		lo = strconv.FormatInt(f.bottom, 10)
	case cursor != noCursor && cursor > f.bottom:
		lo = strconv.FormatInt(cursor, 10)
	default:
		return
	}
	for _, a := range authors {
		f.pulled = append(f.pulled, &pullSource{author: a, cmd: queueAuthorWindow(ctx, p, f.keys, a, reader,
			authorWindow{from: "+inf", to: lo, count: foldWindow, newestFirst: true})})
	}
}

// takePulled adds what queuePulled's reads brought.
func (f *storyFold) takePulled() {
	f.above = takePulled(f.above, f.pulled, foldWindow+1, func(int64) {})
	f.pulled = nil
}

// queue queues the reads that tell which entries above are plain
// reposts, the first time; later calls queue nothing.
func (f *storyFold) queue(ctx context.Context, p redis.Pipeliner) {
	if f == nil || f.resolved {
		return
	}
	n := len(f.above)
	f.fixed, f.exists, f.story = make([]*redis.SliceCmd, n), make([]*redis.StringCmd, n), make([]string, n)
	for i, it := range f.above {
		key := f.keys.Post(strconv.FormatInt(it.id, 10))
		if kept, ok := f.cache.Get(key); ok {
			if orig, plain := keptStory(kept); plain {
				f.story[i] = orig
				f.exists[i] = p.HGet(ctx, key, postAuthorField)
			}
			continue
		}
		f.fixed[i] = hmget(ctx, p, key, postKeptFields)
	}
}

// settle reads the replies of queue's reads, once.
func (f *storyFold) settle() {
	if f == nil || f.resolved || f.story == nil {
		return
	}
	f.resolved = true
	f.newest = map[string]int64{}
	for i, it := range f.above {
		orig := ""
		switch {
		case f.exists[i] != nil && f.exists[i].Val() == it.author:
			orig = f.story[i]
		case f.fixed[i] != nil:
			kept := f.fixed[i].Val()
			if len(kept) != len(postKeptFields) || kept[keptAuthor] != it.author {
				break // gone, or not the entry's post
			}
			f.cache.Add(f.keys.Post(strconv.FormatInt(it.id, 10)), kept)
			if o, plain := keptStory(kept); plain {
				orig = o
			}
		}
		if orig != "" && it.id > f.newest[orig] {
			f.newest[orig] = it.id
		}
	}
}

// hides reports whether a plain repost above, newer than p, tells p's
// story.
func (f *storyFold) hides(p *social.Post) bool {
	if f == nil || len(f.newest) == 0 {
		return false
	}
	story := p.ID
	if p.Plain() {
		story = p.RepostOfID
	}
	id, _ := strconv.ParseInt(p.ID, 10, 64)
	return f.newest[story] > id
}

// postKeptFields are the fields the post cache keeps, in its order, then
// the version they belong to (cachePlan.kept), and keptAuthor the
// author's place among them.
var postKeptFields, keptAuthor = func() ([]any, int) {
	out, author := make([]any, len(postCachePlan.keep)), -1
	for j, i := range postCachePlan.keep {
		out[j] = postRecord.fields[i].name
		if i == postRecord.at("author") {
			author = j
		}
	}
	if postCachePlan.version >= 0 {
		out = append(out, postRecord.fields[postCachePlan.version].name)
	}
	return out, author
}()

// keptStory reads the post cache's fixed fields of a post: its original,
// and whether it is a plain repost.
func keptStory(kept []any) (string, bool) {
	var orig, content string
	for j, i := range postCachePlan.keep {
		switch i {
		case postRecord.at("repost"):
			orig, _ = kept[j].(string)
		case postRecord.at("content"):
			content, _ = kept[j].(string)
		}
	}
	return orig, orig != "" && content == ""
}

// visibleFolded is visibleIn for a home page (with along's reads;
// authors, the candidates' authors when known) that also queues, on the page's first check, the reads that tell the fold
// window's stories; filters are the viewer's as the page read them (nil:
// read with the check).
func (r postReader) visibleFolded(ctx context.Context, viewer string, ids, authors []string, along func(context.Context, redis.Pipeliner, *visibility), fold *storyFold, filters *viewerFilters) ([]*social.Post, error) {
	if filters == nil {
		filters = newViewerFilters(ctx, viewer, true)
	}
	posts, err := r.visibleWith(ctx, social.FilterHome, filters, viewer, ids, authors, func(ctx context.Context, p redis.Pipeliner, v *visibility) {
		if along != nil {
			along(ctx, p, v)
		}
		fold.queue(ctx, p)
	})
	if err != nil {
		return nil, err
	}
	fold.settle()
	return slices.Clip(posts), nil
}
