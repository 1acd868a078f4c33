package redisstore

import (
	"context"
	"fmt"
	"math"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/social"
)

// Followers lists the users following userID, newest follow first; empty
// for a viewer userID blocked (social.SeesGraphOf).
func (s *GraphService) Followers(ctx context.Context, viewerID, userID string, p social.PageRequest) (social.Connection[string], error) {
	pg, err := listPage(ctx, s.rdb, s.keys, viewerID, readplan.ListKey{List: readplan.ListFollowers, Parent: userID, Page: p})
	return pg.Users, err
}

// Following lists the users userID follows, newest follow first; empty
// for a viewer userID blocked (social.SeesGraphOf).
func (s *GraphService) Following(ctx context.Context, viewerID, userID string, p social.PageRequest) (social.Connection[string], error) {
	pg, err := listPage(ctx, s.rdb, s.keys, viewerID, readplan.ListKey{List: readplan.ListFollowing, Parent: userID, Page: p})
	return pg.Users, err
}

// zmscoreFlags turns a ZMSCORE reply into membership flags. go-redis's
// typed ZMScore reads a missing member as score 0, so ZMSCORE is sent raw
// (zmscoreArgs) to tell the two apart.
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
func (s *GraphService) UserCounts(ctx context.Context, ids []string) ([]social.UserCounts, error) {
	d, err := s.UserDetails(ctx, "", ids, readplan.UserWants{Counts: true})
	return d.Counts, err
}

// Follows reports, for each pair, whether its follower follows its
// followee: one ZSCORE each, in one pipeline (each in the follower's
// slot). Visibility is the caller's (social.SeesGraphOf).
func (s *GraphService) Follows(ctx context.Context, pairs []social.FollowPair) ([]bool, error) {
	out := make([]bool, len(pairs))
	cmds := make([]*redis.FloatCmd, len(pairs))
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, fp := range pairs {
			if social.IsID(fp.Follower) && social.IsID(fp.Followee) {
				cmds[i] = p.ZScore(ctx, s.keys.Following(fp.Follower), fp.Followee)
			}
		}
		return nil
	})
	if err != nil && !isNil(err) {
		return nil, fmt.Errorf("read follows of %d pairs: %w", len(pairs), err)
	}
	for i, c := range cmds {
		out[i] = c != nil && c.Err() == nil
	}
	return out, nil
}

// Relations returns how viewerID and each user stand to each other. It
// reads only the viewer's own keys (the mirrored Followers and BlockedBy
// make that possible), so a batch of any size is five commands in one
// pipeline, all in the viewer's slot.
func (s *GraphService) Relations(ctx context.Context, viewerID string, ids []string) ([]social.Relation, error) {
	d, err := s.UserDetails(ctx, viewerID, ids, readplan.UserWants{Relations: true})
	return d.Relations, err
}

// UserDetails loads, for a list of users, what w asks for (profiles,
// counters, relations to viewerID) with one pipeline whatever the length
// of the list: lists of users (followers, likers, comment authors) cost
// one round trip for all their users.
func (s *GraphService) UserDetails(ctx context.Context, viewerID string, ids []string, w readplan.UserWants) (readplan.UserDetails, error) {
	var d readplan.UserDetails
	if len(ids) == 0 {
		return d, nil
	}
	var users []userRead
	var counts []userCountCmds
	var rel *relationCmds
	// ZSCORE of a request that is not there answers nil: not an error.
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		if w.Profiles {
			users = make([]userRead, len(ids))
			for i, id := range ids {
				users[i] = queueUser(ctx, p, s.keys, s.set.profiles, id)
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
	if err := pipelineErr(cmds, err); err != nil {
		return d, fmt.Errorf("load %d users: %w", len(ids), err)
	}
	if w.Profiles {
		d.Users = make([]*social.User, len(ids))
		for i, r := range users {
			d.Users[i] = r.user()
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

func (s *GraphService) queueUserCounts(ctx context.Context, p redis.Pipeliner, id string) userCountCmds {
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
// viewer's slot; and whether the viewer asked each user to follow them
// (a ZSCORE in each user's FollowRequests, in the same pipeline).
type relationCmds struct {
	following, followers     *redis.Cmd
	blocks, blockedBy, mutes *redis.BoolSliceCmd
	requested                []*redis.FloatCmd
}

func (s *GraphService) queueRelations(ctx context.Context, p redis.Pipeliner, viewerID string, ids []string) *relationCmds {
	members := toAny(ids)
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
		requested: queueRequested(ctx, p, k, viewerID, ids),
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
	requested := requestedFlags(c.requested)
	for i := range out {
		out[i] = social.Relation{
			ViewerRequested: requested[i],
			ViewerFollows:   follows[i],
			FollowsViewer:   followed[i],
			ViewerBlocked:   c.blocks.Val()[i],
			BlockedViewer:   c.blockedBy.Val()[i],
			ViewerMuted:     c.mutes.Val()[i],
		}
	}
	return nil
}

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

// CommonFollowing lists the users both userID and otherID follow, in the
// order userID followed them (newest first); an unknown otherID is
// NOT_FOUND.
//
// It walks userID's following list from the cursor in chunks and keeps the
// members otherID's list holds (ZMSCORE), so each page costs two round
// trips when the first chunk fills it (lists.go, commonWalk), and every
// step works on a single slot, except the total (commonCountScript), which
// Redis Cluster rejects (CROSSSLOT); there the first round takes the
// sample of the user's list (commonSampleScript) and the second checks it
// against the other's with the first chunk, and when the other's list is
// the shorter, two more rounds sample that one instead (commonTotals).
func (s *GraphService) CommonFollowing(ctx context.Context, userID, otherID string, p social.PageRequest) (social.Connection[string], error) {
	pg, err := listPage(ctx, s.rdb, s.keys, "", readplan.ListKey{List: readplan.ListCommonFollowing, Parent: userID, With: otherID, Page: p})
	return pg.Users, err
}
