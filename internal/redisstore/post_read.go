package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// VisiblePosts loads posts as viewerID may see them, with one pipeline for
// the whole batch; posts that do not exist, were deleted, or are hidden
// from the viewer are nil.
func (s *PostService) VisiblePosts(ctx context.Context, viewerID string, ids []string) ([]*social.Post, error) {
	return s.visiblePosts(ctx, viewerID, ids, nil, nil)
}

// visiblePosts is VisiblePosts that also queues a page fetch's reads of the
// same posts (by their authors, when known) in its pipeline.
func (s *DB) visiblePosts(ctx context.Context, viewerID string, ids, authors []string, f *pageFetch) ([]*social.Post, error) {
	v := s.newVisibility(viewerID, ids)
	// ZSCORE of a like that is not there answers nil: not an error.
	cmds, err := s.pipelined(ctx, func(p redis.Pipeliner) error {
		v.queue(ctx, p)
		if f != nil {
			f.queue(ctx, p, v, authors)
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return nil, fmt.Errorf("load %d posts: %w", len(ids), err)
	}
	return v.posts(), nil
}

// visibility is the read-time check of a batch of posts for one viewer, in
// a form that joins any pipeline: queue adds its commands, then verdict and
// posts read the replies.
//
// Per post it reads the hash with its counters (HMGET) and, for a signed-in viewer, whether
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
	blocked           map[string]bool // built by access on first use
}

func (s *DB) newVisibility(viewerID string, ids []string) *visibility {
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
		if !social.IsID(id) {
			continue
		}
		v.hash[i] = hmget(ctx, p, v.keys.Post(id), postReadFields)
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

// counts returns the counters the i-th post's hash holds; false when the
// post is missing or its hash has no counters yet (postCountersScript
// reads and sets them).
func (v *visibility) counts(i int) (social.PostCounts, bool) {
	if v.hash[i] == nil {
		return social.PostCounts{}, false
	}
	vals := v.hash[i].Val()
	var n [3]int
	for j := range n {
		s, _ := vals[len(postFields)+j].(string)
		c, err := strconv.Atoi(s)
		if err != nil {
			return social.PostCounts{}, false
		}
		n[j] = c
	}
	return social.PostCounts{Likes: n[0], Comments: n[1], Reposts: n[2]}, true
}

// access applies the visibility policy (social.PostAccess) to the i-th
// post with the facts the pipeline read.
func (v *visibility) access(i int) social.Access {
	p := v.post(i)
	if p == nil || v.viewer == "" || p.AuthorID == v.viewer {
		return social.PostAccess(v.viewer, p, social.AccessFacts{})
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
	return social.PostAccess(v.viewer, p, social.AccessFacts{
		Blocked:  v.blocked[p.AuthorID],
		InOnlyTo: v.only[i].Val(),
		InNotTo:  v.not[i].Val(),
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
	source, _ := vals[6].(string)
	p := &social.Post{
		ID: id, AuthorID: author, Content: content, CreatedAt: msTime(created),
		Visibility: social.Visibility(vis), RepostOfID: repost, RepostOfAuthorID: repostAuthor, Source: source,
	}
	if m, _ := vals[10].(string); m != "" {
		p.Mentions = strings.Split(m, ",")
	}
	if lat, _ := vals[7].(string); lat != "" {
		lng, _ := vals[8].(string)
		place, _ := vals[9].(string)
		p.Location = &social.Location{Name: place}
		p.Location.Latitude, _ = strconv.ParseFloat(lat, 64)
		p.Location.Longitude, _ = strconv.ParseFloat(lng, 64)
	}
	if m, _ := vals[11].(string); m != "" {
		p.Media = decodeMedia(m)
	}
	return p
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
	_, err := s.pipelined(ctx, func(p redis.Pipeliner) error {
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
