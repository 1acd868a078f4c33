package redisstore

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// GraphService keeps the social graph: follows, blocks and mutes, their
// lists, counters and the viewer's relations (graph.Graph).
type GraphService struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
}

// The social graph. Each user's side of it lives in that user's hash slot:
// Following and Followers zsets scored by follow time (ms), Blocks and its
// mirror BlockedBy, Mutes and its mirror MutedBy. No counter is stored:
// followersCount and followingCount are the ZCARDs of the lists, so they
// cannot drift from what the lists hold, whatever retries or races happen.
//
// Every edit (follow, unfollow, block, unblock, mute, unmute) changes both
// users' sides, which live in two hash slots, so each runs as single-slot
// steps in a fixed order that works the same on one Redis and on Redis
// Cluster
// (docs/data-model.md, "Cross-slot steps"):
//
//  0. the target's profile exists (users are never deleted, so this read
//     stays true);
//  1. begin, in the actor's slot: the guards (a follow checks the blocks
//     either way in the actor's Blocks and BlockedBy), the actor's edges,
//     and a pending entry naming the edit;
//  2. the other side, in the target's slot: the same guards on the
//     target's sets, the target's edges;
//  3. end, in the actor's slot: drop the pending entry, after undoing
//     step 1 when step 2 refused.
//
// Every step is idempotent, so a retried mutation redoes them harmlessly.
// Edits of one pair by one actor run one at a time (step 1 answers BUSY
// while another is pending), which keeps a quick follow/unfollow pair from
// leaving the two sides disagreeing; a follow racing a block by the other
// user ends with no edge whichever order the steps interleave in, because
// each side's guard sees that side's block once its step ran. A process
// that dies between steps leaves a pending entry: once older than
// graphGrace, the actor's next edit of any pair finishes it (step 1
// returns it and the edit is run again), and the next edit of the same
// pair takes it over.
//
// A mute's two sides are Mutes (what pages and live streams filter by)
// and MutedBy (what fan-out filters by, with the followers it reads). The
// actor's side goes first, so a mute that stops halfway already hides the
// author's posts (fan-out may still deliver them: pages drop them); an
// unmute that stops halfway leaves MutedBy holding the actor, who then
// misses the author's new posts until the edit is finished (the actor's
// next edit, or SweepPending) and its hook copies the recent ones back.

// mutePending prefixes the pending field of a mute or an unmute. Their
// sides are other keys than a follow's or a block's, so the two kinds of
// edit of one pair keep separate entries: a follow taking over an
// abandoned unmute's entry would leave its MutedBy side undone for good.
const mutePending = "mute:"

// isMuteOp tells the ops whose pending field carries mutePending.
func isMuteOp(op string) bool { return op == "mute" || op == "unmute" }

// pendingField is e's field in the actor's GraphPending.
func (e graphEdit) pendingField() string {
	if isMuteOp(e.op) {
		return mutePending + e.other
	}
	return e.other
}

// graphGrace is how long a pending edit is considered running: far longer
// than its steps take.
const graphGrace = 10 * time.Second

// Replies of the edit scripts besides "OK".
const (
	replyForbidden = "FORBIDDEN"
	replyBusy      = "BUSY"
)

// graphEdit is one edit of the social graph: the guards and edits of each
// side. The guard sets of a side must not hold the other user.
type graphEdit struct {
	op           string
	actor, other string
	guardActor   []string // two sets in the actor's slot, or none
	guardOther   []string // two sets in the other's slot, or none
	actorEdits   []edit
	otherEdits   []edit
	hook         func(ctx context.Context, actor, other string) error
}

// edit is one command of a side: cmd key member [score].
type edit struct {
	cmd, key, member string
	score            int64
}

// Follow makes viewerID follow userID, or, when userID is a locked
// account, asks to (graph_requests.go). Idempotent.
func (s *GraphService) Follow(ctx context.Context, viewerID, userID string) error {
	if requested, err := s.requestFollow(ctx, viewerID, userID); err != nil || requested {
		return err
	}
	return s.runEdit(ctx, s.followEdit(viewerID, userID))
}

func (s *GraphService) followEdit(viewerID, userID string) graphEdit {
	k := s.keys
	return graphEdit{
		op: "follow", actor: viewerID, other: userID,
		guardActor: []string{k.Blocks(viewerID), k.BlockedBy(viewerID)},
		guardOther: []string{k.Blocks(userID), k.BlockedBy(userID)},
		actorEdits: []edit{{cmd: "ZADD", key: k.Following(viewerID), member: userID}},
		otherEdits: []edit{{cmd: "ZADD", key: k.Followers(userID), member: viewerID}},
		// The hook runs also when the follow already existed: it is
		// idempotent, and a retried mutation whose first run failed in
		// the hook gets a second chance.
		hook: s.afterFollow,
	}
}

// Unfollow makes viewerID stop following userID, and withdraws a
// pending follow request to userID. Idempotent.
func (s *GraphService) Unfollow(ctx context.Context, viewerID, userID string) error {
	if err := s.dropRequest(ctx, userID, viewerID); err != nil && social.ErrorCode(err) != social.NotFound {
		return err
	}
	return s.runEdit(ctx, s.unfollowEdit(viewerID, userID))
}

func (s *GraphService) unfollowEdit(viewerID, userID string) graphEdit {
	k := s.keys
	return graphEdit{
		op: "unfollow", actor: viewerID, other: userID,
		actorEdits: []edit{{cmd: "ZREM", key: k.Following(viewerID), member: userID}},
		otherEdits: []edit{{cmd: "ZREM", key: k.Followers(userID), member: viewerID}},
		hook:       s.afterUnfollow,
	}
}

// Block makes viewerID block userID: the follow edges both ways go, and
// neither can follow the other until the block is lifted. Idempotent.
func (s *GraphService) Block(ctx context.Context, viewerID, userID string) error {
	return s.runEdit(ctx, s.blockEdit(viewerID, userID))
}

func (s *GraphService) blockEdit(viewerID, userID string) graphEdit {
	k := s.keys
	return graphEdit{
		op: "block", actor: viewerID, other: userID,
		actorEdits: []edit{
			{cmd: "SADD", key: k.Blocks(viewerID), member: userID},
			{cmd: "ZREM", key: k.Following(viewerID), member: userID},
			{cmd: "ZREM", key: k.Followers(viewerID), member: userID},
		},
		otherEdits: []edit{
			{cmd: "SADD", key: k.BlockedBy(userID), member: viewerID},
			{cmd: "ZREM", key: k.Following(userID), member: viewerID},
			{cmd: "ZREM", key: k.Followers(userID), member: viewerID},
		},
		hook: s.afterBlock,
	}
}

// Unblock lifts viewerID's block of userID. The follow edges the block
// removed stay removed. Idempotent.
func (s *GraphService) Unblock(ctx context.Context, viewerID, userID string) error {
	return s.runEdit(ctx, s.unblockEdit(viewerID, userID))
}

func (s *GraphService) unblockEdit(viewerID, userID string) graphEdit {
	k := s.keys
	return graphEdit{
		op: "unblock", actor: viewerID, other: userID,
		actorEdits: []edit{{cmd: "SREM", key: k.Blocks(viewerID), member: userID}},
		otherEdits: []edit{{cmd: "SREM", key: k.BlockedBy(userID), member: viewerID}},
	}
}

// Mute makes viewerID mute userID. userID is not told (MutedBy is read
// only by fan-out). Idempotent.
func (s *GraphService) Mute(ctx context.Context, viewerID, userID string) error {
	return s.runEdit(ctx, s.muteEdit(viewerID, userID))
}

func (s *GraphService) muteEdit(viewerID, userID string) graphEdit {
	k := s.keys
	return graphEdit{
		op: "mute", actor: viewerID, other: userID,
		actorEdits: []edit{{cmd: "SADD", key: k.Mutes(viewerID), member: userID}},
		otherEdits: []edit{{cmd: "SADD", key: k.MutedBy(userID), member: viewerID}},
		hook:       s.afterMute,
	}
}

// Unmute lifts viewerID's mute of userID. Idempotent.
func (s *GraphService) Unmute(ctx context.Context, viewerID, userID string) error {
	return s.runEdit(ctx, s.unmuteEdit(viewerID, userID))
}

func (s *GraphService) unmuteEdit(viewerID, userID string) graphEdit {
	k := s.keys
	return graphEdit{
		op: "unmute", actor: viewerID, other: userID,
		actorEdits: []edit{{cmd: "SREM", key: k.Mutes(viewerID), member: userID}},
		otherEdits: []edit{{cmd: "SREM", key: k.MutedBy(userID), member: viewerID}},
		hook:       s.afterUnmute,
	}
}

// checkTarget is step 0 of every edit: no edit of oneself, and the target
// exists. With index set (a two-sided edit) the same round also records
// viewerID in GraphPendingIndex, before any pending entry can exist.
func (s *GraphService) checkTarget(ctx context.Context, op, viewerID, userID string, index bool) error {
	if viewerID == userID {
		return social.Errorf(social.BadUserInput, "you cannot %s yourself", op)
	}
	var exists *redis.IntCmd
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		exists = p.Exists(ctx, s.keys.User(userID))
		if index {
			p.ZAdd(ctx, s.keys.GraphPendingIndex(), redis.Z{Score: float64(s.set.now().UnixMilli()), Member: viewerID})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("%s %s: %w", op, userID, err)
	}
	if n := exists.Val(); n == 0 {
		return social.Errorf(social.NotFound, "user %s not found", userID)
	}
	return nil
}

// runEdit runs e's steps, then its timeline hook, then finishes the
// actor's abandoned edits that step 1 reported.
func (s *GraphService) runEdit(ctx context.Context, e graphEdit) error {
	abandoned, err := s.runSteps(ctx, e)
	if err != nil {
		return err
	}
	if e.hook != nil {
		if err := e.hook(ctx, e.actor, e.other); err != nil {
			return fmt.Errorf("%s %s: %w", e.op, e.other, err)
		}
	}
	for other, op := range abandoned {
		if ab, ok := s.editByName(op, e.actor, other); ok {
			// Best effort: an edit that fails again stays pending and
			// the actor's next edit retries it.
			if _, err := s.runSteps(ctx, ab); err == nil && ab.hook != nil {
				_ = ab.hook(ctx, ab.actor, ab.other)
			}
		}
	}
	return nil
}

// editByName rebuilds a pending edit from its recorded name and its
// field in the actor's GraphPending.
func (s *GraphService) editByName(op, actor, field string) (graphEdit, bool) {
	other := field
	if isMuteOp(op) {
		other = strings.TrimPrefix(field, mutePending)
	}
	switch op {
	case "follow":
		return s.followEdit(actor, other), true
	case "unfollow":
		return s.unfollowEdit(actor, other), true
	case "block":
		return s.blockEdit(actor, other), true
	case "unblock":
		return s.unblockEdit(actor, other), true
	case "mute":
		return s.muteEdit(actor, other), true
	case "unmute":
		return s.unmuteEdit(actor, other), true
	}
	return graphEdit{}, false
}

// busyWait bounds how long an edit waits for another edit of the same pair
// by the same actor (a double click) to finish; then it is refused with
// RATE_LIMITED, which a client may retry.
const busyWait = 5 * time.Second

// runSteps runs steps 0 to 3 of e and returns the actor's abandoned edits
// (other user id → op) that step 1 reported.
func (s *GraphService) runSteps(ctx context.Context, e graphEdit) (map[string]string, error) {
	if err := s.checkTarget(ctx, e.op, e.actor, e.other, true); err != nil {
		return nil, err
	}
	wrap := func(step string, err error) error { return fmt.Errorf("%s %s: %s: %w", e.op, e.other, step, err) }
	var (
		now     int64
		pending string // this edit's pending entry: "<op>:<start ms>"
		begin   []string
	)
	// The wait is judged by the store's clock (a test moves it past the
	// bound), and by the wall clock too, so that a clock that stands still
	// never makes an edit wait for ever.
	start := time.Now()
	for deadline := s.set.now().Add(busyWait); ; {
		now = s.set.now().UnixMilli()
		pending = e.op + ":" + strconv.FormatInt(now, 10)
		res, err := s.graphSide(ctx, "begin", e.actor, e.guardActor, e.pendingField(), pending, now, withScore(e.actorEdits, now))
		if err != nil {
			return nil, wrap("actor's side", err)
		}
		if res[0] != replyBusy {
			begin = res
			break
		}
		if s.set.now().After(deadline) || time.Since(start) > busyWait {
			return nil, &social.Error{Code: social.RateLimited, RetryAfter: time.Second,
				Message: fmt.Sprintf("another change between you and user %s is still running: retry shortly", e.other)}
		}
		select {
		case <-ctx.Done():
			return nil, wrap("actor's side", ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
	if begin[0] == replyForbidden {
		return nil, social.Errorf(social.Forbidden, "you cannot %s user %s", e.op, e.other)
	}
	abandoned := map[string]string{}
	for i := 2; i+1 < len(begin); i += 2 {
		op, _, _ := strings.Cut(begin[i+1], ":")
		abandoned[begin[i]] = op
	}
	// The other side uses the score the actor's side holds, so a retry
	// keeps the first follow time on both sides.
	score := now
	if begin[1] != "" {
		score, _ = strconv.ParseInt(begin[1], 10, 64)
	}
	other, err := s.graphSide(ctx, "side", e.other, e.guardOther, e.actor, "", now, withScore(e.otherEdits, score))
	if err != nil {
		return nil, wrap("other side", err)
	}
	var undo []edit
	if other[0] == replyForbidden {
		undo = inverse(e.actorEdits)
	}
	if _, err := s.graphSide(ctx, "end", e.actor, nil, e.pendingField(), pending, now, undo); err != nil {
		return nil, wrap("finish", err)
	}
	if other[0] == replyForbidden {
		return nil, social.Errorf(social.Forbidden, "you cannot %s user %s", e.op, e.other)
	}
	return abandoned, nil
}

// graphSide runs graphSideScript on one user's side.
func (s *GraphService) graphSide(ctx context.Context, mode, user string, guards []string, other, pending string, now int64, edits []edit) ([]string, error) {
	keys := make([]string, 0, 3+len(edits))
	guardMember := ""
	if len(guards) == 2 {
		keys = append(keys, guards...)
		guardMember = other
	} else {
		// Unused guard slots: keys of the same user, never read.
		keys = append(keys, s.keys.Blocks(user), s.keys.BlockedBy(user))
	}
	keys = append(keys, s.keys.GraphPending(user))
	args := []any{mode, guardMember, other, pending, now, graphGrace.Milliseconds()}
	for _, ed := range edits {
		keys = append(keys, ed.key)
		sc := ""
		if ed.cmd == "ZADD" {
			sc = strconv.FormatInt(ed.score, 10)
		}
		args = append(args, ed.cmd, ed.member, sc)
	}
	return graphSideScript.Run(ctx, s.rdb, keys, args...).StringSlice()
}

// withScore returns edits with score set on each ZADD.
func withScore(edits []edit, score int64) []edit {
	out := make([]edit, len(edits))
	for i, ed := range edits {
		ed.score = score
		out[i] = ed
	}
	return out
}

// inverse returns the edits undoing edits that added members (only a
// follow is refused after its first step, and it only adds).
func inverse(edits []edit) []edit {
	undo := map[string]string{"ZADD": "ZREM", "SADD": "SREM"}
	out := make([]edit, len(edits))
	for i, ed := range edits {
		ed.cmd = undo[ed.cmd]
		out[i] = ed
	}
	return out
}

// Paging of zsets scored by time, newest first.
//
// The order is Redis's own for ZRANGE ... REV: score descending, and for
// equal scores (two follows in one millisecond) member descending, bytewise.
// A cursor is the (score, member) of the last edge shown; the next page
// starts strictly after that position in this order, wherever it is now,
// so edges added or removed between pages neither repeat nor hide an edge
// that stayed.
