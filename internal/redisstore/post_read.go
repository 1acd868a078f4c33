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
	if f != nil {
		v.want = f.viewWants()
	}
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
// Per post it reads a post view (post_view.go: the hash and, for a
// signed-in viewer, whether the viewer is in the onlyTo or notTo set its
// visibility consults, plus the extras of want); once per batch the
// viewer's own Blocks and BlockedBy sets (SMEMBERS), which also cover
// authors not known before the hashes arrive. Anonymous viewers see
// PUBLIC posts only; an author always sees their own posts.
type visibility struct {
	keys              Keys
	s                 *DB
	viewer            string
	ids               []string
	want              viewWants
	views             []postView
	blocks, blockedBy *redis.StringSliceCmd
	blocked           map[string]bool // built by access on first use
}

func (s *DB) newVisibility(viewerID string, ids []string) *visibility {
	return &visibility{keys: s.keys, s: s, viewer: viewerID, ids: ids}
}

// queue adds the commands of the check to a pipeline.
func (v *visibility) queue(ctx context.Context, p redis.Pipeliner) {
	v.views = make([]postView, len(v.ids))
	for i, id := range v.ids {
		v.views[i] = v.s.queuePostView(ctx, p, v.viewer, id, v.want)
	}
	if v.viewer != "" && len(v.ids) > 0 {
		v.blocks = p.SMembers(ctx, v.keys.Blocks(v.viewer))
		v.blockedBy = p.SMembers(ctx, v.keys.BlockedBy(v.viewer))
	}
}

// post returns the i-th post as stored, or nil when it does not exist.
func (v *visibility) post(i int) *social.Post {
	return v.views[i].post(v.ids[i])
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
	return social.PostAccess(v.viewer, p, v.views[i].accessFacts(v.blocked[p.AuthorID]))
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

// PostCounts returns the counters of posts with one pipeline: ZCARD of
// Likers, LLEN of PostComments and SCARD of PostReposts. A count is the
// size of its list, so it can never drift from what the list holds.
func (s *PostService) PostCounts(ctx context.Context, ids []string) ([]social.PostCounts, error) {
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
