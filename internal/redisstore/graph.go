package redisstore

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// The social graph. Each user's side of it lives in that user's hash slot:
// Following and Followers zsets scored by follow time (ms), Blocks and its
// mirror BlockedBy, and Mutes. No counter is stored: followersCount and
// followingCount are the ZCARDs of the lists, so they cannot drift from
// what the lists hold, whatever retries or races happen.
//
// Every edit is one Lua script that checks the target user exists (and,
// for a follow, that no block stands either way) in the same atomic step
// as its writes, and is idempotent, so go-redis re-sending it after a slow
// reply changes nothing: ZADD NX keeps the first follow time, SADD, SREM
// and ZREM of a member already added or removed are no-ops.
//
// Redis Cluster: a follow or a block writes keys of two users, which are in
// two slots ({u<a>} and {u<b>}), so these scripts are rejected there
// (CROSSSLOT). A Cluster deployment would split each into one idempotent
// single-slot script per side and run them in order:
//   - follow: the follower's side first (check Blocks/BlockedBy of the
//     follower, ZADD NX Following), then the followee's side (check EXISTS
//     of the user hash and that the followee's Blocks lacks the follower,
//     ZADD NX Followers with the same score; when the check fails, undo the
//     follower's side and answer FORBIDDEN);
//   - block: the blocker's side first (SADD Blocks, ZREM both edges from the
//     blocker's zsets), then the blocked user's side (SADD BlockedBy, ZREM
//     both edges from their zsets);
//   - unfollow/unblock: the follower's or blocker's side first.
//
// A crash between the two steps leaves a half edge that the client's retry
// of the (idempotent) mutation completes; a periodic reconciliation pass
// would compare each Following entry with the other side's Followers and
// each Blocks entry with BlockedBy, and finish or undo half-done edits.
// The counts would then briefly differ between the two users, never from
// their own lists.

// Replies of the edit scripts besides "OK".
const (
	replyNotFound  = "NOT_FOUND"
	replyForbidden = "FORBIDDEN"
)

// Follow makes viewerID follow userID. Idempotent.
func (s *Store) Follow(ctx context.Context, viewerID, userID string) error {
	k := s.keys
	// afterFollow runs also when the follow already existed: the hook is
	// idempotent, and a retried mutation whose first run failed in the
	// hook gets a second chance.
	return s.editGraph(ctx, "follow", viewerID, userID, s.afterFollow, followScript,
		[]string{k.User(userID), k.Following(viewerID), k.Followers(userID), k.Blocks(viewerID), k.BlockedBy(viewerID)},
		viewerID, userID, s.now().UnixMilli())
}

// Unfollow makes viewerID stop following userID. Idempotent.
func (s *Store) Unfollow(ctx context.Context, viewerID, userID string) error {
	k := s.keys
	return s.editGraph(ctx, "unfollow", viewerID, userID, s.afterUnfollow, memberScript,
		[]string{k.User(userID), k.Following(viewerID), k.Followers(userID)},
		"ZREM", userID, viewerID)
}

// Block makes viewerID block userID: the follow edges both ways go, and
// neither can follow the other until the block is lifted. Idempotent.
func (s *Store) Block(ctx context.Context, viewerID, userID string) error {
	k := s.keys
	return s.editGraph(ctx, "block", viewerID, userID, s.afterBlock, blockScript,
		[]string{
			k.User(userID),
			k.Following(viewerID), k.Followers(viewerID),
			k.Following(userID), k.Followers(userID),
			k.Blocks(viewerID), k.BlockedBy(userID),
		},
		viewerID, userID)
}

// Unblock lifts viewerID's block of userID. The follow edges the block
// removed stay removed. Idempotent.
func (s *Store) Unblock(ctx context.Context, viewerID, userID string) error {
	k := s.keys
	return s.editGraph(ctx, "unblock", viewerID, userID, nil, memberScript,
		[]string{k.User(userID), k.Blocks(viewerID), k.BlockedBy(userID)},
		"SREM", userID, viewerID)
}

// Mute makes viewerID mute userID. Only the viewer's own key changes, so
// userID is not told. Idempotent.
func (s *Store) Mute(ctx context.Context, viewerID, userID string) error {
	return s.editGraph(ctx, "mute", viewerID, userID, s.afterMute, memberScript,
		[]string{s.keys.User(userID), s.keys.Mutes(viewerID)},
		"SADD", userID)
}

// Unmute lifts viewerID's mute of userID. Idempotent.
func (s *Store) Unmute(ctx context.Context, viewerID, userID string) error {
	return s.editGraph(ctx, "unmute", viewerID, userID, s.afterUnmute, memberScript,
		[]string{s.keys.User(userID), s.keys.Mutes(viewerID)},
		"SREM", userID)
}

// editGraph runs one edit script of viewerID on userID, turns its reply
// into the domain's errors and, after a success, runs the timeline hook
// (when there is one).
func (s *Store) editGraph(ctx context.Context, op, viewerID, userID string, hook func(ctx context.Context, viewerID, userID string) error,
	script *redis.Script, keys []string, args ...any) error {
	if viewerID == userID {
		return social.Errorf(social.BadUserInput, "you cannot %s yourself", op)
	}
	res, err := script.Run(ctx, s.rdb, keys, args...).Text()
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, userID, err)
	}
	switch res {
	case "OK":
	case replyNotFound:
		return social.Errorf(social.NotFound, "user %s not found", userID)
	case replyForbidden:
		return social.Errorf(social.Forbidden, "you cannot %s user %s", op, userID)
	default:
		return fmt.Errorf("%s %s: unexpected reply %q", op, userID, res)
	}
	if hook != nil {
		if err := hook(ctx, viewerID, userID); err != nil {
			return fmt.Errorf("%s %s: %w", op, userID, err)
		}
	}
	return nil
}

// Followers lists the users following userID, newest follow first; empty
// for a viewer userID blocked (social.SeesGraphOf).
func (s *Store) Followers(ctx context.Context, viewerID, userID string, p social.PageRequest) (social.Connection[string], error) {
	pg, err := s.listPage(ctx, viewerID, social.ListKey{List: social.ListFollowers, Parent: userID, Page: p})
	return pg.Users, err
}

// Following lists the users userID follows, newest follow first; empty
// for a viewer userID blocked (social.SeesGraphOf).
func (s *Store) Following(ctx context.Context, viewerID, userID string, p social.PageRequest) (social.Connection[string], error) {
	pg, err := s.listPage(ctx, viewerID, social.ListKey{List: social.ListFollowing, Parent: userID, Page: p})
	return pg.Users, err
}

// Chunks in which CommonFollowing walks the first user's following list:
// the first is large enough to fill most pages in one go, later ones grow
// so a sparse intersection of long lists takes few round trips.
const (
	commonChunk    = 256
	commonChunkMax = 4096
)

// CommonFollowing lists the users both userID and otherID follow, in the
// order userID followed them (newest first); an unknown otherID is
// NOT_FOUND.
//
// It walks userID's following list from the cursor in chunks and keeps the
// members otherID's list holds (ZMSCORE), so each page costs two round
// trips when the first chunk fills it (lists.go, commonWalk), and every
// step works on a single slot, except the total (commonCountScript), which
// Redis Cluster rejects (CROSSSLOT); there it would become a count by the
// same chunked ZMSCORE walk, or a cached value.
func (s *Store) CommonFollowing(ctx context.Context, userID, otherID string, p social.PageRequest) (social.Connection[string], error) {
	pg, err := s.listPage(ctx, "", social.ListKey{List: social.ListCommonFollowing, Parent: userID, With: otherID, Page: p})
	return pg.Users, err
}

// zmscoreFlags turns a ZMSCORE reply into membership flags.
func zmscoreFlags(c *redis.Cmd) ([]bool, error) {
	vals, err := c.Slice()
	if err != nil {
		return nil, err
	}
	out := make([]bool, len(vals))
	for i, v := range vals {
		out[i] = v != nil
	}
	return out, nil
}

// UserCounts returns the profile counters of users with one pipeline of
// ZCARDs: followers, following and the user's own posts.
func (s *Store) UserCounts(ctx context.Context, ids []string) ([]social.UserCounts, error) {
	d, err := s.UserDetails(ctx, "", ids, social.UserWants{Counts: true})
	return d.Counts, err
}

// Relations returns how viewerID and each user stand to each other. It
// reads only the viewer's own keys (the mirrored Followers and BlockedBy
// make that possible), so a batch of any size is five commands in one
// pipeline, all in the viewer's slot.
func (s *Store) Relations(ctx context.Context, viewerID string, ids []string) ([]social.Relation, error) {
	d, err := s.UserDetails(ctx, viewerID, ids, social.UserWants{Relations: true})
	return d.Relations, err
}

// UserDetails loads, for a list of users, what w asks for (profiles,
// counters, relations to viewerID) with one pipeline whatever the length
// of the list: lists of users (followers, likers, comment authors) cost
// one round trip for all their users.
func (s *Store) UserDetails(ctx context.Context, viewerID string, ids []string, w social.UserWants) (social.UserDetails, error) {
	var d social.UserDetails
	if len(ids) == 0 {
		return d, nil
	}
	var users []*redis.SliceCmd
	var counts []userCountCmds
	var rel *relationCmds
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if w.Profiles {
			users = make([]*redis.SliceCmd, len(ids))
			for i, id := range ids {
				users[i] = s.queueUser(ctx, p, id)
			}
		}
		if w.Counts {
			counts = make([]userCountCmds, len(ids))
			for i, id := range ids {
				counts[i] = s.queueUserCounts(ctx, p, id)
			}
		}
		if w.Relations && viewerID != "" {
			rel = s.queueRelations(ctx, p, viewerID, ids)
		}
		return nil
	})
	if err != nil {
		return d, fmt.Errorf("load %d users: %w", len(ids), err)
	}
	if w.Profiles {
		d.Users = make([]*social.User, len(ids))
		for i, c := range users {
			d.Users[i] = userFromValues(ids[i], c.Val())
		}
	}
	if w.Counts {
		d.Counts = make([]social.UserCounts, len(ids))
		for i, c := range counts {
			d.Counts[i] = c.counts()
		}
	}
	if w.Relations {
		d.Relations = make([]social.Relation, len(ids))
		if rel != nil {
			if err := rel.read(d.Relations); err != nil {
				return d, fmt.Errorf("load relations of %s: %w", viewerID, err)
			}
		}
	}
	return d, nil
}

// userCountCmds are the replies of one user's counters: ZCARD of
// Followers, Following, UserPosts and PublicPosts.
type userCountCmds [4]*redis.IntCmd

func (s *Store) queueUserCounts(ctx context.Context, p redis.Pipeliner, id string) userCountCmds {
	return userCountCmds{
		p.ZCard(ctx, s.keys.Followers(id)),
		p.ZCard(ctx, s.keys.Following(id)),
		p.ZCard(ctx, s.keys.UserPosts(id)),
		p.ZCard(ctx, s.keys.PublicPosts(id)),
	}
}

func (c userCountCmds) counts() social.UserCounts {
	return social.UserCounts{Followers: int(c[0].Val()), Following: int(c[1].Val()), Posts: int(c[2].Val()), PublicPosts: int(c[3].Val())}
}

// relationCmds read how a viewer stands to a list of users. They read
// only the viewer's own keys (the mirrored Followers and BlockedBy make
// that possible), so a list of any length is five commands, all in the
// viewer's slot.
type relationCmds struct {
	following, followers     *redis.Cmd
	blocks, blockedBy, mutes *redis.BoolSliceCmd
}

func (s *Store) queueRelations(ctx context.Context, p redis.Pipeliner, viewerID string, ids []string) *relationCmds {
	members := make([]any, len(ids))
	for i, id := range ids {
		members[i] = id
	}
	zmscore := func(key string) *redis.Cmd {
		return p.Do(ctx, append([]any{"ZMSCORE", key}, members...)...)
	}
	k := s.keys
	return &relationCmds{
		following: zmscore(k.Following(viewerID)),
		followers: zmscore(k.Followers(viewerID)),
		blocks:    p.SMIsMember(ctx, k.Blocks(viewerID), members...),
		blockedBy: p.SMIsMember(ctx, k.BlockedBy(viewerID), members...),
		mutes:     p.SMIsMember(ctx, k.Mutes(viewerID), members...),
	}
}

func (c *relationCmds) read(out []social.Relation) error {
	follows, err := zmscoreFlags(c.following)
	if err != nil {
		return err
	}
	followed, err := zmscoreFlags(c.followers)
	if err != nil {
		return err
	}
	for i := range out {
		out[i] = social.Relation{
			ViewerFollows: follows[i],
			FollowsViewer: followed[i],
			ViewerBlocked: c.blocks.Val()[i],
			BlockedViewer: c.blockedBy.Val()[i],
			ViewerMuted:   c.mutes.Val()[i],
		}
	}
	return nil
}

// Paging of zsets scored by time, newest first.
//
// The order is Redis's own for ZRANGE ... REV: score descending, and for
// equal scores (two follows in one millisecond) member descending, bytewise.
// A cursor is the (score, member) of the last edge shown; the next page
// starts strictly after that position in this order, wherever it is now,
// so edges added or removed between pages neither repeat nor hide an edge
// that stayed.

// edge is one zset entry as Redis formats it.
type edge struct {
	member, score string
}

// edgePos is a position in a zset's newest-first order; the zero value is
// the start.
type edgePos edge

// parseEdgePage reads the reply of edgePageScript.
func parseEdgePage(c *redis.Cmd) (int, []edge, error) {
	res, err := c.Slice()
	if err != nil {
		return 0, nil, err
	}
	if len(res) != 2 {
		return 0, nil, fmt.Errorf("page script: unexpected reply %v", res)
	}
	total, _ := res[0].(int64)
	flat, _ := res[1].([]any)
	edges := make([]edge, 0, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		m, _ := flat[i].(string)
		sc, _ := flat[i+1].(string)
		edges = append(edges, edge{member: m, score: sc})
	}
	return int(total), edges, nil
}

// edgeConnection makes a page of up to first edges; a further edge, when
// read, only says there is a next page.
func edgeConnection(edges []edge, first, total int) social.Connection[string] {
	c := social.Connection[string]{Total: total, HasNext: len(edges) > first}
	edges = edges[:min(len(edges), first)]
	c.Items = make([]string, len(edges))
	c.Cursors = make([]string, len(edges))
	for i, e := range edges {
		c.Items[i] = e.member
		c.Cursors[i] = social.EncodeCursor(e.score, e.member)
	}
	return c
}

// edgeCursor validates a page request of an edge list and decodes its
// cursor. The resolvers validate first already; the store checks again
// because the cursor's score goes into Redis commands.
func edgeCursor(p social.PageRequest) (edgePos, error) {
	if err := social.ValidateFirst(p.First); err != nil {
		return edgePos{}, err
	}
	if p.After == "" {
		return edgePos{}, nil
	}
	parts, err := social.DecodeCursor(p.After, 2)
	if err != nil {
		return edgePos{}, err
	}
	f, err := strconv.ParseFloat(parts[0], 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return edgePos{}, social.Errorf(social.BadUserInput, "malformed cursor")
	}
	// Canonical decimal form: Redis and Lua both read it, whatever spelling
	// (hex, exponent) ParseFloat accepted.
	return edgePos{score: strconv.FormatFloat(f, 'f', -1, 64), member: parts[1]}, nil
}
