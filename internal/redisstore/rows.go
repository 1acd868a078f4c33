package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/rcache"
	"github.com/socialgw/gateway/internal/social"
)

// The pipelined reads of one row each that both the services' batch
// reads (Users, PostCounts, Marks, PostComments) and a page fetch
// (timeline_fetch.go) queue: a user's profile, a post's counters, the
// viewer's marks on a post, the first rows of a post's comments. Each is a
// queue function and the reply's reader.

// userRead is one user's profile read: served by the profile cache
// (profilecache.go), or queued with its ticket.
type userRead struct {
	id    string
	hit   *social.User
	cmd   *redis.SliceCmd
	t     rcache.Ticket
	cache *rcache.Cache[social.User]
}

// queueUser queues the profile read of one user, unless the profile cache
// c (nil: off) holds it.
func queueUser(ctx context.Context, p redis.Pipeliner, k Keys, c *rcache.Cache[social.User], id string) userRead {
	key := k.User(id)
	if u, ok := c.Get(key); ok {
		return userRead{id: id, hit: &u}
	}
	return userRead{id: id, t: c.Begin(key), cmd: profileRead.queue(ctx, p, key), cache: c}
}

// queued reports whether r went to Redis.
func (r userRead) queued() bool { return r.cmd != nil }

// user returns the profile r read as readers see it: nil when the user
// does not exist or is suspended (a suspended account is hidden
// everywhere until the suspension is lifted). Call it, or stored, once a
// read, after its pipeline ran.
func (r userRead) user() *social.User {
	if u := r.stored(); u != nil && !u.Suspended {
		return u
	}
	return nil
}

// stored returns the profile r read, nil when the user does not exist, and
// offers one read from Redis to the profile cache.
func (r userRead) stored() *social.User {
	if r.cmd == nil {
		return r.hit
	}
	var u *social.User
	if r.cmd.Err() == nil { // else not read (Redis down): the caller reports the pipeline's error
		u = userFromValues(r.id, r.cmd.Val())
	}
	if u == nil {
		r.cache.Finish(r.t, social.User{}, false)
		return nil
	}
	r.cache.Finish(r.t, *u, true)
	return u
}

// userFromValues builds a user from an HMGET of profileRead; nil when the
// hash does not exist.
func userFromValues(id string, v []any) *social.User {
	var r userRow
	profileRead.decode(&r, v)
	if r.user.Name == "" {
		return nil
	}
	r.user.ID = id
	return &r.user
}

// countCmds is the reply of one post's counters.
type countCmds struct{ cmd *redis.Cmd }

// queueCounts queues the counters of a post (postCountersScript: the
// post hash's nlikes, ncomments and nreposts, which lua/lib/counts.lua
// keeps equal to the sizes of Likers, PostComments and PostReposts).
func queueCounts(ctx context.Context, p redis.Pipeliner, k Keys, id string) countCmds {
	if !social.IsID(id) {
		return countCmds{}
	}
	return countCmds{postCountersScript.EvalSha(ctx, p, []string{k.Post(id), k.Likers(id), k.PostComments(id), k.PostReposts(id)})}
}

func (c countCmds) counts() social.PostCounts {
	if c.cmd == nil {
		return social.PostCounts{}
	}
	n, _ := c.cmd.Int64Slice()
	if len(n) != 3 {
		return social.PostCounts{}
	}
	return social.PostCounts{Likes: int(n[0]), Comments: int(n[1]), Reposts: int(n[2])}
}

// markCmds are the replies of one post's marks.
type markCmds struct {
	liked    *redis.FloatCmd
	reposted *redis.StringCmd
	flags    *redis.StringCmd // the viewer's PostViewers field: b bookmarked
}

// queueMarks queues whether viewerID likes postID (ZSCORE of Likers) and
// has a plain repost of it (HGET of PostPlainReposts), and bookmarked it
// (the b flag of PostViewers); nil replies: no.
func queueMarks(ctx context.Context, p redis.Pipeliner, k Keys, viewerID, postID string) markCmds {
	if !social.IsID(postID) || viewerID == "" {
		return markCmds{}
	}
	return markCmds{p.ZScore(ctx, k.Likers(postID), viewerID), p.HGet(ctx, k.PostPlainReposts(postID), viewerID),
		p.HGet(ctx, k.PostViewers(postID), viewerID)}
}

func (c markCmds) marks() social.Marks {
	if c.liked == nil {
		return social.Marks{}
	}
	return social.Marks{Liked: c.liked.Err() == nil, Reposted: c.reposted.Val() != "", Bookmarked: strings.Contains(c.flags.Val(), "b")}
}

// queueCommentRows queues the read of n of a post's comments after the
// cursor after (commentRowsScript); pack also writes the post hash's cm
// (lua/lib/packed.lua).
func queueCommentRows(ctx context.Context, p redis.Pipeliner, k Keys, postID string, n int, after string, pack bool) *redis.Cmd {
	keys := []string{k.PostComments(postID)}
	if pack {
		keys = append(keys, k.Post(postID))
	}
	return commentRowsScript.EvalSha(ctx, p, keys, n, k.PostComment(postID, ""), after, "0")
}

// queueReplyRows queues the read of n of a comment's answers, oldest
// first, after the cursor after (commentRowsScript on CommentReplies).
func queueReplyRows(ctx context.Context, p redis.Pipeliner, k Keys, postID, commentID string, n int, after string) *redis.Cmd {
	return commentRowsScript.EvalSha(ctx, p, []string{k.CommentReplies(postID, commentID)}, n, k.PostComment(postID, ""), after, "1")
}

// commentsFromReply turns a commentRowsScript reply into the first page
// of a post's comments, as PostComments would page them.
func commentsFromReply(postID string, first int, cmd *redis.Cmd) (social.Connection[*social.Comment], error) {
	var c social.Connection[*social.Comment]
	if cmd == nil {
		return c, nil
	}
	res, err := cmd.Slice()
	if err != nil {
		return c, err
	}
	if len(res) < 1 || (len(res)-1)%5 != 0 {
		return c, fmt.Errorf("unexpected script reply of %d values", len(res))
	}
	total, _ := res[0].(int64)
	c.Total = int(total)
	rows := (len(res) - 1) / 5
	c.HasNext = rows > first
	for r := 0; r < min(rows, first); r++ {
		v := res[1+5*r : 6+5*r]
		id, _ := v[0].(string)
		author, _ := v[1].(string)
		if author == "" {
			continue // deleted between LRANGE and HMGET: cannot happen in one script, kept for safety
		}
		content, _ := v[2].(string)
		created, _ := v[3].(string)
		reply, _ := v[4].(string)
		c.Items = append(c.Items, &social.Comment{ID: id, PostID: postID, AuthorID: author, Content: content, CreatedAt: msTime(created), InReplyToID: reply})
		c.Cursors = append(c.Cursors, social.EncodeCursor(id))
	}
	return c, nil
}

// packedComments is how many of its newest comments a post hash packs in
// cm (PACKED in lua/lib/packed.lua): a page asking for fewer knows from
// them whether there are more.
const packedComments = 4

// unpackComments turns a post hash's cm, and its ncomments total, into the
// first page of first of its comments, as commentsFromReply reads the
// same rows from commentRowsScript; false when cm is not as
// lua/lib/packed.lua writes it.
func unpackComments(postID, packed string, total, first int) (social.Connection[*social.Comment], bool) {
	c := social.Connection[*social.Comment]{Total: total}
	rows := 0
	// With the answered ids ("r"), five fields before the content.
	packed, answers := strings.CutPrefix(packed, "r")
	f := make([]string, 4)
	if answers {
		f = make([]string, 5)
	}
	for packed != "" {
		for j := range f {
			var ok bool
			if f[j], packed, ok = strings.Cut(packed, " "); !ok {
				return c, false
			}
		}
		reply, size := "", f[3]
		if answers {
			reply, size = strings.TrimPrefix(f[3], "-"), f[4]
		}
		n, err := strconv.Atoi(size)
		if err != nil || n < 0 || n > len(packed) {
			return c, false
		}
		content := packed[:n]
		packed = packed[n:]
		if rows++; rows > first {
			continue
		}
		c.Items = append(c.Items, &social.Comment{ID: f[0], PostID: postID, AuthorID: f[1], Content: content, CreatedAt: msTime(f[2]), InReplyToID: reply})
		c.Cursors = append(c.Cursors, social.EncodeCursor(f[0]))
	}
	c.HasNext = rows > first
	return c, true
}
