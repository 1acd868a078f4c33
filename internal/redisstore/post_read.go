package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/rcache"
	"github.com/socialgw/gateway/internal/social"
)

// VisiblePosts loads posts as viewerID may see them, with one pipeline for
// the whole batch; posts that do not exist, were deleted, or are hidden
// from the viewer are nil.
func (s *PostService) VisiblePosts(ctx context.Context, viewerID string, ids []string) ([]*social.Post, error) {
	return s.set.postReader(s.rdb, s.keys).visiblePosts(ctx, viewerID, ids, nil, nil)
}

// postReader reads posts' hashes for the services and the page readers:
// the client, the keys and the post cache (postcache.go; nil: off).
type postReader struct {
	rdb   redis.UniversalClient
	keys  Keys
	cache *rcache.Cache[[]any]
	now   func() time.Time // the clock filters expire by
}

// postReader is the post reader of a service with these settings: its
// post cache and the clock filters expire by.
func (set *settings) postReader(rdb redis.UniversalClient, keys Keys) postReader {
	return postReader{rdb, keys, set.posts, set.now}
}

// visiblePosts is VisiblePosts whose pipeline also carries what along
// queues (a page fetch's reads of the same posts: pageFetch.along), when
// not nil.
//
// What an operation found hidden by its audience stays so (an audience
// never changes): the operation remembers it (social.NoteScreened), and
// its other reads of the same posts (aliases of one page, run one after
// another) skip them without asking Redis. A post found missing is not
// remembered: ids are counted, and one read before its post is written
// (a guessed next id) must be found once it is.
//
// authors, when known (nil otherwise), are the posts' authors, authors[i]
// the i-th's: the check then reads their locks with the hashes.
func (r postReader) visiblePosts(ctx context.Context, viewerID string, ids, authors []string, along func(context.Context, redis.Pipeliner, *visibility)) ([]*social.Post, error) {
	return r.visibleIn(ctx, 0, viewerID, ids, authors, along)
}

// visibleIn is visiblePosts for a page of context in (0: none), which
// also leaves out the posts the viewer's keyword filters hide there
// (filters.go): their filters ride in the check's pipeline.
func (r postReader) visibleIn(ctx context.Context, in social.FilterContext, viewerID string, ids, authors []string, along func(context.Context, redis.Pipeliner, *visibility)) ([]*social.Post, error) {
	// A page's check (a context, or extras to bring along) reads the
	// filters; a lone post's check needs none.
	return r.visibleWith(ctx, in, newViewerFilters(ctx, viewerID, in != 0 || along != nil), viewerID, ids, authors, along)
}

// visibleWith is visibleIn with the viewer's filters given: read in its
// pipeline unless known. When they are known and apply in in, the text of
// the originals of the candidates the post cache knows as reposts joins
// the pipeline too (texts), so that matching a repost on its original
// costs no round trip of its own.
func (r postReader) visibleWith(ctx context.Context, in social.FilterContext, filters *viewerFilters, viewerID string, ids, authors []string, along func(context.Context, redis.Pipeliner, *visibility)) ([]*social.Post, error) {
	v := r.newVisibility(viewerID, knownHidden(ctx, viewerID, ids)).withAuthors(authors)
	v.filters = filters
	var texts *postTexts
	if filters.known && filters.m.Applies(in) {
		texts = r.cachedOriginals(ids)
	}
	// HGET of a field that is not there answers nil: not an error.
	cmds, err := pipelined(ctx, r.rdb, func(p redis.Pipeliner) error {
		v.queue(ctx, p)
		filters.queue(ctx, p, r.keys)
		texts.queue(ctx, p, r.keys)
		if along != nil {
			along(ctx, p, v)
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return nil, fmt.Errorf("load %d posts: %w", len(ids), err)
	}
	if err := v.settle(ctx); err != nil {
		return nil, err
	}
	posts := v.posts()
	for i, id := range v.ids {
		if v.hash[i] != nil && posts[i] == nil {
			if v.access(i) == social.Hidden {
				social.NoteScreened(ctx, viewerID, id, true)
			}
		}
	}
	if m := filters.matcher(ctx, r.now()); m.Applies(in) {
		return r.dropFiltered(ctx, m, in, viewerID, posts, texts.read())
	}
	return posts, nil
}

// knownHidden returns ids with "" in place of each post ctx's operation
// already found hidden from viewerID by its audience: a check reads
// nothing of those, and finds them missing.
func knownHidden(ctx context.Context, viewerID string, ids []string) []string {
	var out []string
	for i, id := range ids {
		if hidden, _ := social.Screened(ctx, viewerID, id); hidden {
			if out == nil {
				out = append([]string(nil), ids...)
			}
			out[i] = ""
		}
	}
	if out == nil {
		return ids
	}
	return out
}

// visibility is the read-time check of a batch of posts for one viewer, in
// a form that joins any pipeline: queue adds its commands, the pipeline
// runs, settle reads what older posts lack, then verdict and posts read
// the replies.
//
// Per post it reads the hash with its counters and packed comments
// (HMGET) and, for a signed-in viewer, the viewer's flags in PostViewers
// (HGET): whether the viewer is in the post's audience set, likes it and
// has a plain repost of it; once per batch the union of the viewer's own
// Blocks and BlockedBy sets (SUNION), which also covers authors not known
// before the hashes arrive, and the flags of the authors it knows
// (authorLocks: one HMGET of AuthorFlags). Anonymous viewers see PUBLIC
// posts only; an author always sees their own posts.
type visibility struct {
	r        postReader
	viewer   string
	ids      []string
	hash     []*redis.SliceCmd  // postRecord.all, or postCachePlan.live when fixed holds the rest
	fixed    [][]any            // the cached fixed fields of each post (postcache.go)
	rows     []*postRow         // each post's hash, built by settle
	flags    []*redis.StringCmd // the viewer's field of PostViewers
	migrated map[int]string     // the flags of posts settle migrated
	settled  bool
	blocks   *redis.StringSliceCmd // Blocks ∪ BlockedBy
	blocked  map[string]bool       // built by access on first use
	filters  *viewerFilters        // the viewer's, read with a page's check (nil: none)
	authors  []string              // the posts' authors when known before the hashes (withAuthors)
	locks    authorLocks
}

func (r postReader) newVisibility(viewerID string, ids []string) *visibility {
	return &visibility{r: r, viewer: viewerID, ids: ids}
}

// withAuthors tells the check the posts' authors, authors[i] the i-th's
// ("" or missing where not known): a page knows them from its entries
// (home and tag entries carry them, a user page is one author's, a
// repost records its original's). Their locks (authorLocks) are then read
// in the check's own pipeline; an author learnt only from a hash costs
// settle one more round trip.
func (v *visibility) withAuthors(authors []string) *visibility {
	v.authors = authors
	return v
}

// queue adds the commands of the check to a pipeline.
func (v *visibility) queue(ctx context.Context, p redis.Pipeliner) {
	k := v.r.keys
	v.hash = make([]*redis.SliceCmd, len(v.ids))
	v.fixed = make([][]any, len(v.ids))
	if v.viewer != "" {
		v.flags = make([]*redis.StringCmd, len(v.ids))
	}
	for i, id := range v.ids {
		if !social.IsID(id) {
			continue
		}
		v.hash[i], v.fixed[i] = v.r.queuePostRead(ctx, p, id)
		if v.viewer != "" {
			v.flags[i] = p.HGet(ctx, k.PostViewers(id), v.viewer)
		}
	}
	if v.viewer != "" && len(v.ids) > 0 {
		v.blocks = p.SUnion(ctx, k.Blocks(v.viewer), k.BlockedBy(v.viewer))
	}
	v.locks.queue(ctx, p, k, v.knownAuthors())
}

// deleted reports whether p's author, or for a plain repost its
// original's, is an account suspended or being purged (authorLocks).
func (v *visibility) deleted(p *social.Post) bool {
	return v.locks.hidden(p.AuthorID) || (plainRepost(p) && v.locks.hidden(p.RepostOfAuthorID))
}

// plainRepost reports whether p is a repost with no words of its own,
// which reads as missing with its original's author.
func plainRepost(p *social.Post) bool { return p.RepostOfAuthorID != "" && p.Content == "" }

// settle completes the check once its pipeline ran: the posts whose hash
// has no pv (written before PostViewers existed) get their PostViewers
// built by postMigrateScript, which answers the viewer's flags. That is
// one more round trip, only for a batch holding such posts, and once per
// post.
func (v *visibility) settle(ctx context.Context) error {
	if err := v.postRows(ctx); err != nil {
		return err
	}
	v.settled = true
	if err := v.settleLocks(ctx); err != nil {
		return err
	}
	if v.viewer == "" {
		return nil
	}
	var todo []int
	for i := range v.ids {
		// A post that exists (it has an author) without pv.
		if r := v.rows[i]; r != nil && r.post.AuthorID != "" && !r.viewers {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	k := v.r.keys
	cmds := make([]*redis.Cmd, len(todo))
	sent, err := pipelined(ctx, v.r.rdb, func(p redis.Pipeliner) error {
		for j, i := range todo {
			id := v.ids[i]
			cmds[j] = postMigrateScript.EvalSha(ctx, p, []string{k.Post(id), k.Likers(id), k.PostPlainReposts(id),
				k.PostOnlyTo(id), k.PostNotTo(id), k.PostViewers(id)}, v.viewer)
		}
		return nil
	})
	if err := pipelineErr(sent, err); err != nil {
		return fmt.Errorf("build the viewer flags of %d posts: %w", len(todo), err)
	}
	v.migrated = make(map[int]string, len(todo))
	for j, i := range todo {
		v.migrated[i], _ = cmds[j].Val().(string)
	}
	return nil
}

// check runs the check on its own: its pipeline, then settle.
func (v *visibility) check(ctx context.Context) error {
	// HGET of a flag that is not there answers nil: not an error.
	cmds, err := pipelined(ctx, v.r.rdb, func(p redis.Pipeliner) error { v.queue(ctx, p); return nil })
	if err := pipelineErr(cmds, err); err != nil {
		return err
	}
	return v.settle(ctx)
}

// row is the i-th post's hash, nil when the post was not read (not an
// id).
func (v *visibility) row(i int) *postRow {
	if !v.settled {
		panic("redisstore: a visibility check read before settle")
	}
	return v.rows[i]
}

// viewerFlags are the viewer's flag letters of the i-th post.
func (v *visibility) viewerFlags(i int) string {
	if !v.settled {
		panic("redisstore: a visibility check read before settle")
	}
	if f, ok := v.migrated[i]; ok {
		return f
	}
	if v.flags == nil || v.flags[i] == nil {
		return ""
	}
	return v.flags[i].Val()
}

// marks are the viewer's marks of the i-th post.
func (v *visibility) marks(i int) social.Marks {
	if v.viewer == "" {
		return social.Marks{}
	}
	f := v.viewerFlags(i)
	return social.Marks{Liked: strings.Contains(f, "l"), Reposted: strings.Contains(f, "r"), Bookmarked: strings.Contains(f, "b")}
}

// post returns the i-th post as stored, or nil when it does not exist.
func (v *visibility) post(i int) *social.Post {
	r := v.row(i)
	if r == nil || r.post.AuthorID == "" {
		return nil
	}
	p := r.post
	p.ID = v.ids[i]
	if p.Location != nil {
		l := *p.Location
		p.Location = &l
	}
	p.Mentions, p.Media = slices.Clone(p.Mentions), slices.Clone(p.Media)
	return &p
}

// counts returns the counters the i-th post's hash holds; false when the
// post is missing or its hash has no counters yet (postCountersScript
// reads and sets them).
func (v *visibility) counts(i int) (social.PostCounts, bool) {
	r := v.row(i)
	if r == nil || r.countsMissing != 0 {
		return social.PostCounts{}, false
	}
	return r.counts, true
}

// comments returns the first comments of the i-th post from its hash (cm
// and ncomments), as PostComments would page first of them; false when
// the hash cannot tell: first is more than it packs, or it has no cm and
// comments (older data), or the post is missing.
func (v *visibility) comments(i, first int) (social.Connection[*social.Comment], bool) {
	r := v.row(i)
	if r == nil || first >= packedComments || r.countsMissing&countComments != 0 || (!r.hasPacked && r.counts.Comments != 0) {
		return social.Connection[*social.Comment]{}, false
	}
	return unpackComments(v.ids[i], r.packed, r.counts.Comments, first)
}

// hidden tells whether user u is on either side of a block with the
// viewer (false for an anonymous viewer), building the set from the
// pipeline's read on first use.
func (v *visibility) hidden(u string) bool {
	if v.viewer == "" || v.blocks == nil {
		return false
	}
	if v.blocked == nil {
		v.blocked = make(map[string]bool)
		for _, b := range v.blocks.Val() {
			v.blocked[b] = true
		}
	}
	return v.blocked[u]
}

// access applies the visibility policy (social.PostAccess) to the i-th
// post with the facts the pipeline read.
func (v *visibility) access(i int) social.Access {
	p := v.post(i)
	if p != nil && v.deleted(p) {
		return social.Missing
	}
	if p == nil || v.viewer == "" || p.AuthorID == v.viewer {
		var f social.AccessFacts
		if p != nil {
			f.AuthorLocked = v.locks.locked(p.AuthorID)
			f.AuthorSuspended = v.locks.hidden(p.AuthorID)
		}
		return social.PostAccess(v.viewer, p, f)
	}
	v.hidden("")
	// A post has one audience set, PostOnlyTo or PostNotTo as its vis
	// says, and the viewer's a flag mirrors membership of it.
	in := strings.Contains(v.viewerFlags(i), "a")
	return social.PostAccess(v.viewer, p, social.AccessFacts{
		Blocked:         v.blocked[p.AuthorID],
		InOnlyTo:        in && p.Visibility == social.OnlyTo,
		InNotTo:         in && p.Visibility == social.NotTo,
		AuthorSuspended: v.locks.hidden(p.AuthorID),
		AuthorLocked:    v.locks.locked(p.AuthorID),
		FollowsAuthor:   v.locks.follows[p.AuthorID],
	})
}

// posts returns the batch with nil for every post the viewer may not see.
func (v *visibility) posts() []*social.Post {
	out := make([]*social.Post, len(v.ids))
	for i := range v.ids {
		if v.access(i) == social.Visible {
			out[i] = v.post(i)
		}
	}
	return out
}

// PostCounts returns the counters of posts with one pipeline: the
// counters each post's hash holds (queueCounts), which the scripts that
// change Likers, PostComments and PostReposts set to their sizes.
func (s *PostService) PostCounts(ctx context.Context, ids []string) ([]social.PostCounts, error) {
	out := make([]social.PostCounts, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	cmds := make([]countCmds, len(ids))
	_, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = queueCounts(ctx, p, s.keys, id)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load counters of %d posts: %w", len(ids), err)
	}
	for i, c := range cmds {
		out[i] = c.counts()
	}
	return out, nil
}

// Audience returns a post's audience lists (members sorted by id). The
// resolver shows them to the post's author only.
func (s *PostService) Audience(ctx context.Context, postID string) (social.Audience, error) {
	if !social.IsID(postID) {
		return social.Audience{}, nil
	}
	var only, not *redis.StringSliceCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		only = p.SMembers(ctx, s.keys.PostOnlyTo(postID))
		not = p.SMembers(ctx, s.keys.PostNotTo(postID))
		return nil
	})
	if err != nil {
		return social.Audience{}, fmt.Errorf("load audience of post %s: %w", postID, err)
	}
	return social.Audience{OnlyTo: sortIDs(only.Val()), NotTo: sortIDs(not.Val())}, nil
}
