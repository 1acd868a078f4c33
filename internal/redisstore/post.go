package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// Posts.
//
// A post is one hash in its own {p<id>} slot (author, content, created ms,
// vis, and repost when it is a repost) with its audience set (PostOnlyTo or
// PostNotTo) beside it. The hash is what makes a post exist: every read
// path loads it (VisiblePosts) and checks the audience against it at read
// time, so a post is never shown half-written, and a deleted post (hash
// gone) disappears from every page at once, whatever the timelines still
// hold.
//
// createPost writes, in this order:
//  1. one pipeline that checks the audience users exist and the reposted
//     post is visible to the author, and INCRs PostSeq for the id (a retry
//     of INCR, or a failed check, only leaves a gap in the ids);
//  2. postScript: the audience set, then the hash, in one atomic step in
//     the post's slot; it recognises its own earlier run (the id is fresh,
//     so a hash already there is this very write retried);
//  3. one pipeline: XADD of the fan-out job, the repost link (SADD into the
//     original's PostReposts, only while the original exists), and
//     authorPostScript in the author's slot (ZADD UserPosts with score = id,
//     and the ordered, idempotent insert into the author's own home
//     timeline). The fan-out worker repeats the last two (both idempotent),
//     so a crash after the XADD loses nothing; a crash before it leaves a
//     post hash that no timeline lists and whose id no client ever got.
//
// So createPost costs three round trips whatever the author's follower
// count: delivering to followers is the worker's job.

// Post hash fields, in the order VisiblePosts reads them.
var postFields = []string{postAuthorField, "content", "created", "vis", "repost", "rauthor"}

// Limits of createPost.
const (
	MaxPostLen      = 500  // characters (Unicode code points) after trimming
	MaxAudienceSize = 1000 // ids in onlyTo or notTo
)

// postScript writes a post's audience set and hash in one step.
//
// KEYS: Post, the audience set (PostOnlyTo or PostNotTo). ARGV: the number
// n of hash field/value arguments that follow, the fields and values, then
// the audience members.
var postScript = redis.NewScript(`
local n = tonumber(ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 1 then return 'OK' end
if #ARGV > n + 1 then redis.call('SADD', KEYS[2], unpack(ARGV, n + 2)) end
redis.call('HSET', KEYS[1], unpack(ARGV, 2, n + 1))
return 'OK'
`)

// repostLinkScript adds a repost to its original's PostReposts while the
// original exists, so a link never outlives a deleted original. SADD makes
// a retry a no-op.
//
// KEYS: Post(original), PostReposts(original). ARGV: the repost's id.
var repostLinkScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SADD', KEYS[2], ARGV[1])
return 1
`)

// authorPostScript puts a post in its author's own timelines: UserPosts
// (ZADD of score = id, idempotent) and the author's home list (ordered
// insert that skips an entry already there).
//
// KEYS: UserPosts, Home, HomeMark. ARGV: post id, home entry, cap.
var authorPostScript = redis.NewScript(homeLib + `
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1])
return home_insert(KEYS[2], KEYS[3], tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]))
`)

// CreatePost publishes a post of authorID. The post is in the author's own
// timelines when it returns; followers get it from the fan-out worker.
func (s *Store) CreatePost(ctx context.Context, authorID string, in social.NewPost) (*social.Post, error) {
	content, err := validatePostContent(in.Content)
	if err != nil {
		return nil, err
	}
	vis, audience, err := validateAudience(in)
	if err != nil {
		return nil, err
	}
	if in.RepostOf != "" && !isID(in.RepostOf) {
		return nil, social.Errorf(social.NotFound, "post %s not found", in.RepostOf)
	}

	// 1. Checks and the id, in one round trip.
	exists := make([]*redis.IntCmd, len(audience))
	var orig *visibility
	if in.RepostOf != "" {
		orig = s.newVisibility(authorID, []string{in.RepostOf})
	}
	var seq *redis.IntCmd
	_, err = s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range audience {
			exists[i] = p.Exists(ctx, s.keys.User(id))
		}
		if orig != nil {
			orig.queue(ctx, p)
		}
		seq = p.Incr(ctx, s.keys.PostSeq())
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("check new post: %w", err)
	}
	for i, c := range exists {
		if c.Val() == 0 {
			return nil, social.Errorf(social.BadUserInput, "unknown user %s in the audience", audience[i])
		}
	}
	if orig != nil {
		switch orig.verdict(0) {
		case visBlocked:
			return nil, social.Errorf(social.Forbidden, "you cannot repost this user's posts")
		case visMissing, visHidden:
			return nil, social.Errorf(social.NotFound, "post %s not found", in.RepostOf)
		}
	}
	id := strconv.FormatInt(seq.Val(), 10)
	created := s.now().UTC().Truncate(1e6)

	// 2. The post itself: audience set and hash in one step.
	args := []any{0, postAuthorField, authorID, "content", content, "created", msString(created), "vis", string(vis)}
	var repostAuthor string
	if in.RepostOf != "" {
		// The original's author is immutable: recording it lets a page
		// load the original and its author in one round trip.
		repostAuthor = orig.post(0).AuthorID
		args = append(args, "repost", in.RepostOf, "rauthor", repostAuthor)
	}
	args[0] = len(args) - 1
	for _, u := range audience {
		args = append(args, u)
	}
	set := s.keys.PostOnlyTo(id)
	if vis == social.NotTo {
		set = s.keys.PostNotTo(id)
	}
	if err := postScript.Run(ctx, s.rdb, []string{s.keys.Post(id), set}, args...).Err(); err != nil {
		return nil, fmt.Errorf("write post %s: %w", id, err)
	}

	// 3. The fan-out job first, then the author's own timelines and the
	// repost link, which the job repeats.
	if err := s.publish(ctx, id, authorID, in.RepostOf); err != nil {
		return nil, err
	}
	return &social.Post{ID: id, AuthorID: authorID, Content: content, CreatedAt: created, Visibility: vis, RepostOfID: in.RepostOf, RepostOfAuthorID: repostAuthor}, nil
}

// publish queues the fan-out job of a new post and writes what its author
// sees at once. The worker repeats these writes when it finds them missing.
func (s *Store) publish(ctx context.Context, id, authorID, repostOf string) error {
	job := []any{jobOp, opPost, jobPost, id, jobAuthor, authorID}
	if repostOf != "" {
		job = append(job, jobRepost, repostOf)
	}
	var xadd *redis.StringCmd
	_, err := s.pipelined(ctx, func(p redis.Pipeliner) error {
		// A retried XADD queues the job twice: harmless, fan-out is
		// idempotent.
		xadd = p.XAdd(ctx, &redis.XAddArgs{Stream: s.keys.FanoutStream(), Values: job})
		s.queuePublished(ctx, p, id, authorID, repostOf)
		return nil
	})
	if err != nil && (xadd == nil || xadd.Err() != nil) {
		return fmt.Errorf("publish post %s: %w", id, err)
	}
	// With the job queued, the worker finishes whatever else failed.
	return nil
}

// queuePublished queues the idempotent writes that put a post in its
// author's timelines and link a repost to its original.
func (s *Store) queuePublished(ctx context.Context, p redis.Pipeliner, id, authorID, repostOf string) {
	authorPostScript.EvalSha(ctx, p, []string{s.keys.UserPosts(authorID), s.keys.Home(authorID), s.keys.HomeMark(authorID)},
		id, homeEntry(id, authorID), s.feed.HomeCap)
	if repostOf != "" {
		repostLinkScript.EvalSha(ctx, p, []string{s.keys.Post(repostOf), s.keys.PostReposts(repostOf)}, id)
	}
}

// validatePostContent trims a post's content and checks its length.
func validatePostContent(content string) (string, error) {
	return social.CleanText(content, "a post", 1, MaxPostLen)
}

// validateAudience returns a post's visibility and its audience list
// (deduplicated). onlyTo and notTo exclude each other; an empty onlyTo is
// refused (it would be a post nobody but its author sees, most likely a
// mistake), an empty notTo means PUBLIC.
func validateAudience(in social.NewPost) (social.Visibility, []string, error) {
	if in.OnlyTo != nil && in.NotTo != nil {
		return "", nil, social.Errorf(social.BadUserInput, "onlyTo and notTo cannot be used together")
	}
	vis, list := social.Public, in.NotTo
	if in.OnlyTo != nil {
		if len(in.OnlyTo) == 0 {
			return "", nil, social.Errorf(social.BadUserInput, "onlyTo must name at least one user")
		}
		vis, list = social.OnlyTo, in.OnlyTo
	} else if len(in.NotTo) > 0 {
		vis = social.NotTo
	}
	if len(list) > MaxAudienceSize {
		return "", nil, social.Errorf(social.BadUserInput, "an audience list holds at most %d users", MaxAudienceSize)
	}
	out := make([]string, 0, len(list))
	seen := make(map[string]bool, len(list))
	for _, id := range list {
		if !isID(id) {
			return "", nil, social.Errorf(social.BadUserInput, "unknown user %q in the audience", id)
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return vis, out, nil
}

// VisiblePosts loads posts as viewerID may see them, with one pipeline for
// the whole batch; posts that do not exist, were deleted, or are hidden
// from the viewer are nil.
func (s *Store) VisiblePosts(ctx context.Context, viewerID string, ids []string) ([]*social.Post, error) {
	return s.visiblePosts(ctx, viewerID, ids, nil, nil)
}

// visiblePosts is VisiblePosts that also queues a page fetch's reads of the
// same posts (by their authors, when known) in its pipeline.
func (s *Store) visiblePosts(ctx context.Context, viewerID string, ids, authors []string, f *pageFetch) ([]*social.Post, error) {
	v := s.newVisibility(viewerID, ids)
	// ZSCORE of a like that is not there answers nil: not an error.
	cmds, err := s.pipelined(ctx, func(p redis.Pipeliner) error {
		v.queue(ctx, p)
		if f != nil {
			f.queue(ctx, p, ids, authors)
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return nil, fmt.Errorf("load %d posts: %w", len(ids), err)
	}
	return v.posts(), nil
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

// Why a post is or is not shown to a viewer.
type verdict int

const (
	visOK      verdict = iota
	visMissing         // no such post, or deleted
	visHidden          // the audience excludes the viewer
	visBlocked         // the author blocked the viewer, or the other way round
)

// visibility is the read-time check of a batch of posts for one viewer, in
// a form that joins any pipeline: queue adds its commands, then verdict and
// posts read the replies.
//
// Per post it reads the hash (HMGET) and, for a signed-in viewer, whether
// the viewer is in the post's onlyTo and notTo sets (SISMEMBER); once per
// batch the viewer's own Blocks and BlockedBy sets (SMEMBERS), which also
// cover authors not known before the hashes arrive. Anonymous viewers see
// PUBLIC and NOT_TO posts, never ONLY_TO ones; an author always sees their
// own posts.
type visibility struct {
	keys              Keys
	viewer            string
	ids               []string
	hash              []*redis.SliceCmd
	only, not         []*redis.BoolCmd
	blocks, blockedBy *redis.StringSliceCmd
	blocked           map[string]bool // built by verdict on first use
}

func (s *Store) newVisibility(viewerID string, ids []string) *visibility {
	return &visibility{keys: s.keys, viewer: viewerID, ids: ids}
}

// queue adds the commands of the check to a pipeline.
func (v *visibility) queue(ctx context.Context, p redis.Pipeliner) {
	v.hash = make([]*redis.SliceCmd, len(v.ids))
	if v.viewer != "" {
		v.only = make([]*redis.BoolCmd, len(v.ids))
		v.not = make([]*redis.BoolCmd, len(v.ids))
	}
	for i, id := range v.ids {
		if !isID(id) {
			continue
		}
		v.hash[i] = p.HMGet(ctx, v.keys.Post(id), postFields...)
		if v.viewer != "" {
			v.only[i] = p.SIsMember(ctx, v.keys.PostOnlyTo(id), v.viewer)
			v.not[i] = p.SIsMember(ctx, v.keys.PostNotTo(id), v.viewer)
		}
	}
	if v.viewer != "" && len(v.ids) > 0 {
		v.blocks = p.SMembers(ctx, v.keys.Blocks(v.viewer))
		v.blockedBy = p.SMembers(ctx, v.keys.BlockedBy(v.viewer))
	}
}

// post returns the i-th post as stored, or nil when it does not exist.
func (v *visibility) post(i int) *social.Post {
	if v.hash[i] == nil {
		return nil
	}
	return postFromValues(v.ids[i], v.hash[i].Val())
}

// verdict says whether the viewer may see the i-th post, and if not, why.
func (v *visibility) verdict(i int) verdict {
	p := v.post(i)
	if p == nil {
		return visMissing
	}
	if p.AuthorID == v.viewer {
		return visOK
	}
	if v.viewer == "" {
		if p.Visibility == social.OnlyTo {
			return visHidden
		}
		return visOK
	}
	if v.blocked == nil {
		v.blocked = make(map[string]bool)
		for _, u := range v.blocks.Val() {
			v.blocked[u] = true
		}
		for _, u := range v.blockedBy.Val() {
			v.blocked[u] = true
		}
	}
	switch {
	case v.blocked[p.AuthorID]:
		return visBlocked
	case p.Visibility == social.OnlyTo && !v.only[i].Val():
		return visHidden
	case p.Visibility == social.NotTo && v.not[i].Val():
		return visHidden
	}
	return visOK
}

// posts returns the batch with nil for every post the viewer may not see.
func (v *visibility) posts() []*social.Post {
	out := make([]*social.Post, len(v.ids))
	for i := range v.ids {
		if v.verdict(i) == visOK {
			out[i] = v.post(i)
		}
	}
	return out
}

// postFromValues builds a post from an HMGET of postFields; nil when the
// hash does not exist.
func postFromValues(id string, vals []any) *social.Post {
	author, _ := vals[0].(string)
	if author == "" {
		return nil
	}
	content, _ := vals[1].(string)
	created, _ := vals[2].(string)
	vis, _ := vals[3].(string)
	repost, _ := vals[4].(string)
	repostAuthor, _ := vals[5].(string)
	return &social.Post{
		ID: id, AuthorID: author, Content: content, CreatedAt: msTime(created),
		Visibility: social.Visibility(vis), RepostOfID: repost, RepostOfAuthorID: repostAuthor,
	}
}

// PostCounts returns the counters of posts with one pipeline: ZCARD of
// Likers, LLEN of PostComments and SCARD of PostReposts. A count is the
// size of its list, so it can never drift from what the list holds.
func (s *Store) PostCounts(ctx context.Context, ids []string) ([]social.PostCounts, error) {
	out := make([]social.PostCounts, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	cmds := make([]countCmds, len(ids))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = s.queueCounts(ctx, p, id)
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

// countCmds are the replies of one post's counters.
type countCmds [3]*redis.IntCmd

// queueCounts queues the counters of a post: ZCARD of Likers, LLEN of
// PostComments and SCARD of PostReposts.
func (s *Store) queueCounts(ctx context.Context, p redis.Pipeliner, id string) countCmds {
	if !isID(id) {
		return countCmds{}
	}
	return countCmds{
		p.ZCard(ctx, s.keys.Likers(id)),
		p.LLen(ctx, s.keys.PostComments(id)),
		p.SCard(ctx, s.keys.PostReposts(id)),
	}
}

func (c countCmds) counts() social.PostCounts {
	if c[0] == nil {
		return social.PostCounts{}
	}
	return social.PostCounts{Likes: int(c[0].Val()), Comments: int(c[1].Val()), Reposts: int(c[2].Val())}
}

// Audience returns a post's audience lists (members sorted by id). The
// resolver shows them to the post's author only.
func (s *Store) Audience(ctx context.Context, postID string) (social.Audience, error) {
	if !isID(postID) {
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

// sortIDs sorts decimal ids numerically.
func sortIDs(ids []string) []string {
	slices.SortFunc(ids, func(a, b string) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return strings.Compare(a, b)
	})
	return ids
}
