package redisstore

import (
	"context"
	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// A post view is one post read as a page shows it, in one script call
// (postViewScript): the hash, the audience facts its visibility check
// needs, and, as asked, its counters, the viewer's marks and its first
// comments. A page's posts cost one command each this way, where reading
// the same by plain commands costs about ten, and the script reads only
// what decides the answer (the audience sets of a post whose visibility
// consults them, the viewer's like of a post that has likes, the comment
// rows of a post that has comments).

// viewWants says what a post view brings besides the post.
type viewWants struct {
	counts, marks bool
	comments      int // comment rows to read (0: none)
}

// postViewArgs are the script's fixed arguments after the viewer: the
// number of hash fields, then (at viewArgFields) the fields themselves.
const viewArgFields = 6

// postView is the reply of one post's view; the zero value (an id that
// is not one) is a missing post.
type postView struct {
	cmd *redis.Cmd
}

// The positions of the facts after the hash fields in the reply.
const (
	viewInOnly = iota
	viewInNot
	viewLikes
	viewComments
	viewReposts
	viewLiked
	viewReposted
	viewFacts
)

// queuePostView queues the view of post id for viewer (” for none).
func (s *DB) queuePostView(ctx context.Context, p redis.Pipeliner, viewer, id string, w viewWants) postView {
	if !social.IsID(id) {
		return postView{}
	}
	k := s.keys
	args := make([]any, 0, viewArgFields+len(postFields))
	args = append(args, viewer, len(postFields), flag(w.counts), flag(w.marks), w.comments, k.PostComment(id, ""))
	args = append(args, postFields...)
	keys := []string{k.Post(id), k.PostOnlyTo(id), k.PostNotTo(id), k.Likers(id), k.PostComments(id), k.PostReposts(id), k.PostPlainReposts(id)}
	return postView{postViewScript.EvalSha(ctx, p, keys, args...)}
}

func flag(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// values returns the reply, nil for a missing post.
func (v postView) values() []any {
	if v.cmd == nil {
		return nil
	}
	vals, _ := v.cmd.Slice()
	if len(vals) < len(postFields)+viewFacts {
		return nil
	}
	return vals
}

// post returns the post as stored, or nil when it does not exist.
func (v postView) post(id string) *social.Post {
	vals := v.values()
	if vals == nil {
		return nil
	}
	return postFromValues(id, vals)
}

// fact returns the i-th fact after the hash fields (0 when missing).
func (v postView) fact(i int) int {
	vals := v.values()
	if vals == nil {
		return 0
	}
	n, _ := vals[len(postFields)+i].(int64)
	return int(n)
}

// accessFacts are the audience facts of the visibility check; blocks are
// the caller's.
func (v postView) accessFacts(blocked bool) social.AccessFacts {
	return social.AccessFacts{Blocked: blocked, InOnlyTo: v.fact(viewInOnly) == 1, InNotTo: v.fact(viewInNot) == 1}
}

func (v postView) counts() social.PostCounts {
	return social.PostCounts{Likes: v.fact(viewLikes), Comments: v.fact(viewComments), Reposts: v.fact(viewReposts)}
}

func (v postView) marks() social.Marks {
	return social.Marks{Liked: v.fact(viewLiked) == 1, Reposted: v.fact(viewReposted) == 1}
}

// comments returns the first page of the post's comments, as PostComments
// would page them, from a view that read first+1 rows.
func (v postView) comments(postID string, first int) social.Connection[*social.Comment] {
	var c social.Connection[*social.Comment]
	vals := v.values()
	if vals == nil {
		return c
	}
	c.Total = v.fact(viewComments)
	addCommentRows(&c, postID, first, vals[len(postFields)+viewFacts:])
	return c
}
