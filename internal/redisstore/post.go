package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// PostService writes and deletes posts and reads them as a viewer may
// see them (graph.Posts' writes, graph.PostReader).
type PostService struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
}

// Posts.
//
// A post is one hash in its own {p<id>} slot (author, content, created ms,
// vis; repost and rauthor when it is a repost; src, lat, lng and place
// when given; media, the attached files as one compact JSON array, when
// there are any) with its audience set (PostOnlyTo or
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
//  2. postScript: the audience set (with its members' flags in
//     PostViewers), then the hash, in one atomic step in
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

// The post hash's fields are postRecord's (records.go).

// CreatePost publishes a post of authorID. The post is in the author's own
// timelines when it returns; followers get it from the fan-out worker.
//
// A repost takes its original's audience (social.ValidateNewPost). A
// plain repost (no content) is one per user and original: asked again,
// CreatePost returns the one that exists. Its claim (PostPlainReposts,
// in the original's slot) is taken between the id and the hash, so two
// racing requests end with one repost, and a claim whose repost was never
// written is taken over.
func (s *PostService) CreatePost(ctx context.Context, authorID string, in social.NewPost) (*social.Post, error) {
	np, err := social.CheckNewPost(in)
	if err != nil {
		return nil, err
	}
	// 1. Checks and the id.
	c, err := s.checkNewPost(ctx, authorID, np)
	if err != nil || c.existing != nil {
		return c.existing, err
	}
	// 2. The post itself: audience set and hash in one step.
	post, err := s.writePost(ctx, authorID, np, c)
	if err != nil {
		return nil, err
	}
	// 3. The fan-out job first, then the author's own timelines and the
	// repost link, which the job repeats.
	// A pulled author's post lands in no home list: live subscribers hear
	// of it on the pulled channel instead (the worker announces the first
	// post of an author it has just made pulled).
	pulled := s.set.feed.Mode == Pull || (c.celeb != nil && c.celeb.Val() != "")
	if err := s.publish(ctx, post.ID, authorID, np.RepostOf, post.Visibility, c.audience, pulled); err != nil {
		return nil, err
	}
	return post, nil
}

// CheckPost applies the rules of a new post's input (social.CheckNewPost)
// without writing anything: CreatePost's first step, for a caller that
// has work to do between the checks and the write (storing files).
func (s *PostService) CheckPost(in social.NewPost) error {
	_, err := social.CheckNewPost(in)
	return err
}

// newPostChecks is what step 1 of CreatePost found: the post's id and
// audience, the original of a repost, whether the author is pulled, or a
// plain repost that exists already.
type newPostChecks struct {
	id       string
	vis      social.Visibility
	audience []string
	orig     *origin
	celeb    *redis.StringCmd
	existing *social.Post
}

// checkNewPost runs the checks of a new post and takes its id: one round
// trip for a plain post; a post with something to check (an audience, an
// original) takes its id only once the checks passed, so a refused post
// leaves nothing behind, not even a gap in the ids.
func (s *PostService) checkNewPost(ctx context.Context, authorID string, np social.CheckedPost) (newPostChecks, error) {
	c := newPostChecks{vis: np.Visibility, audience: np.Audience}
	exists := make([]*redis.IntCmd, len(np.Audience))
	if np.RepostOf != "" {
		c.orig = &origin{id: np.RepostOf, v: s.set.postReader(s.rdb, s.keys).newVisibility(authorID, []string{np.RepostOf})}
	}
	checks := len(np.Audience) > 0 || c.orig != nil
	var seq *redis.IntCmd
	cmds, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		for i, id := range np.Audience {
			exists[i] = p.Exists(ctx, s.keys.User(id))
		}
		if c.orig != nil {
			c.orig.queue(ctx, p, s.keys, authorID, np.Plain())
		}
		if s.set.feed.Mode == Hybrid {
			c.celeb = p.HGet(ctx, s.keys.Celebrities(), authorID)
		}
		if !checks {
			seq = p.Incr(ctx, s.keys.PostSeq())
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return c, fmt.Errorf("check new post: %w", err)
	}
	for i, e := range exists {
		if e.Val() == 0 {
			return c, social.Errorf(social.BadUserInput, "unknown user %s in the audience", np.Audience[i])
		}
	}
	stale := ""
	if c.orig != nil {
		if err := c.orig.v.settle(ctx); err != nil {
			return c, err
		}
		if stale, c.existing, err = s.checkOrigin(ctx, authorID, np, c.orig); err != nil || c.existing != nil {
			return c, err
		}
		c.vis, c.audience = c.orig.audience()
	}
	if checks {
		if seq = s.rdb.Incr(ctx, s.keys.PostSeq()); seq.Err() != nil {
			return c, fmt.Errorf("allocate post id: %w", seq.Err())
		}
	}
	c.id = strconv.FormatInt(seq.Val(), 10)
	if !np.Plain() {
		return c, nil
	}
	c.existing, err = s.claimPlain(ctx, authorID, np.RepostOf, c.id, stale)
	return c, err
}

// checkOrigin checks that the author may see the original of a repost,
// and for a plain repost its claim: the repost it names when it exists,
// CONFLICT while its write may be in progress, or the stale claim to take
// over.
func (s *PostService) checkOrigin(ctx context.Context, authorID string, np social.CheckedPost, orig *origin) (stale string, existing *social.Post, err error) {
	// Hidden by a block, by its audience or gone: alike, so the answer
	// does not reveal that a hidden post exists.
	if orig.v.access(0) != social.Visible {
		return "", nil, social.Errorf(social.NotFound, "post %s not found", np.RepostOf)
	}
	if !np.Plain() {
		return "", nil, nil
	}
	claim, age, err := claimReply(orig.claim)
	if err != nil || claim == "" {
		return "", nil, err
	}
	if p, err := s.claimedRepost(ctx, authorID, np.RepostOf, claim, age); p != nil || err != nil {
		return "", p, err
	}
	return claim, nil, nil
}

// claimPlain claims the author's plain repost of original for the new id,
// taking over stale ("" for none): nil when the claim is the new id's, the
// repost another request claimed first when it exists, else CONFLICT.
func (s *PostService) claimPlain(ctx context.Context, authorID, original, id, stale string) (*social.Post, error) {
	holder, err := repostClaimScript.Run(ctx, s.rdb, []string{s.keys.Post(original), s.keys.PostPlainReposts(original), s.keys.PostViewers(original)},
		authorID, id, stale).Text()
	switch {
	case err != nil:
		return nil, fmt.Errorf("claim plain repost of %s: %w", original, err)
	case holder == "":
		return nil, social.Errorf(social.NotFound, "post %s not found", original)
	case !strings.HasPrefix(holder, id+"|"):
		// A concurrent request claimed it first, just now.
		if p, err := s.claimedRepost(ctx, authorID, original, holder, 0); p != nil || err != nil {
			return p, err
		}
		return nil, social.Errorf(social.Conflict, "a repost of post %s is being made: try again", original)
	}
	return nil, nil
}

// writePost writes the checked post's audience set and hash (postScript).
func (s *PostService) writePost(ctx context.Context, authorID string, np social.CheckedPost, c newPostChecks) (*social.Post, error) {
	mentions, err := resolveMentions(ctx, s.rdb, s.keys, authorID, np.Content)
	if err != nil {
		return nil, err
	}
	post := &social.Post{ID: c.id, AuthorID: authorID, Content: np.Content, CreatedAt: s.set.now().UTC().Truncate(1e6),
		Visibility: c.vis, RepostOfID: np.RepostOf, Location: np.Location, Source: np.Source, Mentions: mentions, Media: np.Media,
		SpoilerText: np.Spoiler, Sensitive: np.Sensitive}
	if c.orig != nil {
		// The original's author is immutable: recording it lets a page
		// load the original and its author in one round trip.
		post.RepostOfAuthorID = c.orig.v.post(0).AuthorID
	}
	args := postHash(post)
	for _, u := range c.audience {
		args = append(args, u)
	}
	set := s.keys.PostOnlyTo(c.id)
	if c.vis == social.NotTo {
		set = s.keys.PostNotTo(c.id)
	}
	if err := postScript.Run(ctx, s.rdb, []string{s.keys.Post(c.id), set, s.keys.PostViewers(c.id)}, args...).Err(); err != nil {
		return nil, fmt.Errorf("write post %s: %w", c.id, err)
	}
	return post, nil
}

// origin is what creating a repost reads about its original: whether the
// reposter may see it, its audience, and the reposter's plain-repost claim
// with its age (claimAgeScript).
type origin struct {
	id        string
	v         *visibility
	only, not *redis.StringSliceCmd
	claim     *redis.Cmd
}

func (o *origin) queue(ctx context.Context, p redis.Pipeliner, k Keys, reposter string, plain bool) {
	o.v.queue(ctx, p)
	o.only = p.SMembers(ctx, k.PostOnlyTo(o.id))
	o.not = p.SMembers(ctx, k.PostNotTo(o.id))
	if plain {
		o.claim = claimAgeScript.EvalSha(ctx, p, []string{k.PostPlainReposts(o.id)}, reposter)
	}
}

// audience is the repost's: the original's (social.RepostAudience).
func (o *origin) audience() (social.Visibility, []string) {
	p := o.v.post(0)
	switch p.Visibility {
	case social.OnlyTo:
		return p.Visibility, social.RepostAudience(p.Visibility, o.only.Val(), p.AuthorID)
	case social.NotTo:
		return p.Visibility, o.not.Val()
	}
	return social.Public, nil
}

// claimReply reads claimAgeScript's reply: the claim ("" for none) and its
// age by Redis's clock.
func claimReply(c *redis.Cmd) (string, time.Duration, error) {
	v, err := c.Slice()
	if err != nil {
		return "", 0, fmt.Errorf("read plain-repost claim: %w", err)
	}
	claim, _ := v[0].(string)
	ms, _ := v[1].(int64)
	return claim, time.Duration(ms) * time.Millisecond, nil
}

// claimGrace is how long a plain-repost claim whose repost is not written
// yet counts as a write in progress; after it, the claim's writer is
// taken for dead and the claim may be taken over. The claim's age is
// measured by Redis's clock, so gateways with skewed clocks agree.
const claimGrace = 10 * time.Second

// claimedRepost is the plain repost a claim ("<id>|<ms>", age old) names,
// when it exists; CONFLICT while its write may still be in progress; nil,
// nil when the claim is stale.
func (s *PostService) claimedRepost(ctx context.Context, reposter, original, claim string, age time.Duration) (*social.Post, error) {
	id, _, _ := strings.Cut(claim, "|")
	p, err := s.ownPost(ctx, reposter, id)
	if err != nil {
		return nil, err
	}
	if p != nil {
		// Its writer may have died between the hash and the fan-out job:
		// publish again (idempotent) what the author's timeline lacks.
		if err := s.rdb.ZScore(ctx, s.keys.UserPosts(reposter), id).Err(); isNil(err) {
			only, err := listedAudience(ctx, s.rdb, s.keys, id, p.Visibility)
			if err != nil {
				return nil, err
			}
			if err := s.publish(ctx, id, reposter, original, p.Visibility, only, s.set.feed.Mode == Pull); err != nil {
				return nil, err
			}
		} else if err != nil {
			return nil, fmt.Errorf("look up repost %s: %w", id, err)
		}
		return p, nil
	}
	if age < claimGrace {
		return nil, social.Errorf(social.Conflict, "a repost of post %s is being made: try again", original)
	}
	return nil, nil
}

// ownPost loads viewerID's post id: nil when it does not exist.
func (s *PostService) ownPost(ctx context.Context, viewerID, id string) (*social.Post, error) {
	posts, err := s.set.postReader(s.rdb, s.keys).visiblePosts(ctx, viewerID, []string{id}, nil, nil)
	if err != nil {
		return nil, fmt.Errorf("load post %s: %w", id, err)
	}
	if p := posts[0]; p != nil && p.AuthorID == viewerID {
		return p, nil
	}
	return nil, nil
}

// postHash is postScript's arguments for a new post's hash: the number
// of field/value arguments, then those (postRecord: counters 0, pv set).
func postHash(p *social.Post) []any {
	row := postRow{post: *p, viewers: true}
	fv := postRecord.encode(&row)
	return append([]any{len(fv)}, fv...)
}

// publish queues the fan-out job of a new post and writes what its author
// sees at once. The worker repeats these writes when it finds them missing.
// pulled announces the post on the pulled live channel too; listed is
// the readers an ONLY_TO or NOT_TO post's audience lists.
func (s *PostService) publish(ctx context.Context, id, authorID, repostOf string, vis social.Visibility, listed []string, pulled bool) error {
	job := []any{jobOp, opPost, jobPost, id, jobAuthor, authorID}
	if repostOf != "" {
		job = append(job, jobRepost, repostOf)
	}
	var xadd *redis.StringCmd
	_, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		// A retried XADD queues the job twice: harmless, fan-out is
		// idempotent.
		xadd = p.XAdd(ctx, &redis.XAddArgs{Stream: fanoutStream(s.keys, s.set.feed.FanoutShards, id), Values: job})
		s.queuePublished(ctx, p, id, authorID, repostOf, vis, listed)
		if pulled {
			announce(ctx, s.set.publishCmd, p, s.keys.LivePulled(), homeEntry(id, authorID))
		}
		return nil
	})
	if err != nil && (xadd == nil || xadd.Err() != nil) {
		return fmt.Errorf("publish post %s: %w", id, err)
	}
	// With the job queued, the worker finishes whatever else failed.
	return nil
}

// queuePublished queues the idempotent writes that put a post in its
// author's timelines (with the reader's index: listed is the readers an
// ONLY_TO or NOT_TO post's audience lists) and link a repost to its
// original.
func (s *PostService) queuePublished(ctx context.Context, p redis.Pipeliner, id, authorID, repostOf string, vis social.Visibility, listed []string) {
	keys := append([]string{s.keys.UserPosts(authorID), s.keys.Home(authorID), s.keys.HomeMark(authorID)}, postIndexKeys(s.keys, authorID, vis, listed)...)
	authorPostScript.EvalSha(ctx, p, keys, id, homeEntry(id, authorID), s.set.feed.HomeCap, s.keys.LiveUser(authorID), publishCommand(s.set.publishCmd))
	if repostOf != "" {
		repostLinkScript.EvalSha(ctx, p, []string{s.keys.Post(repostOf), s.keys.PostReposts(repostOf)}, id)
	}
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

// resolveMentions returns the ids of the users text mentions as @name
// (social.Mentions), in order, leaving out unknown names and the author:
// one round trip when there are any.
func resolveMentions(ctx context.Context, rdb redis.UniversalClient, k Keys, authorID, text string) ([]string, error) {
	names := social.Mentions(text)
	if len(names) == 0 {
		return nil, nil
	}
	ids, err := userIDsByName(ctx, rdb, k, names)
	if err != nil {
		return nil, fmt.Errorf("resolve mentions: %w", err)
	}
	out := ids[:0]
	for _, id := range ids {
		if id != "" && id != authorID && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out, nil
}
