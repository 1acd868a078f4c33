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

// NotificationService reads and marks users' notifications (graph.Notes,
// live.NoteStore).
type NotificationService struct{ *DB }

// Notifications.
//
// A user's notifications live in their slot (keys.go: Notes, NoteData,
// NoteOpen, NoteMeta, NoteActors). Each is a group: one comment, one
// mention, or the likes or reposts of one post, or the follows, within
// NoteWindow. Its id is the activity number that last raised it, so the
// list is ordered by activity, a page's cursor and a live stream's
// position are that number, and "read up to" is a mark on it.
//
// The request path only queues a job on the fan-out queue, in the same
// round trip as its own write where it can (a like: its script and the
// XADD in one pipeline). The worker then reads the truth (is the like
// still there? the comment? the follow?) and makes the recipient's
// notification reflect it with noteScript: adding the actor, or taking it
// out (an unlike, an unfollow, a deleted comment or repost). So a job run
// twice, or jobs of one action run out of order, end the same, and a job
// is never lost: it stays pending until it is done, as fan-out's are. The
// script checks the recipient's blocks and mutes in the recipient's slot;
// the worker checks a mentioned user's access to the post.

// A note job's fields (besides jobOp = opNote).
const (
	opNote     = "note"
	noteKind   = "kind"   // social.NoteKind
	noteTarget = "target" // the post liked, the comment, the user followed, the repost, the post or comment mentioning
	notePost   = "post"   // the post commented on, reposted, or holding the mentioning comment
	noteActor  = "actor"
	noteTo     = "to" // the recipients, comma-separated: the post's author, the mentioned users
	noteAt     = "at" // when the actor acted (ms): actors are ordered by it, however late jobs run
)

// queueNote queues a note job in p.
func (s *DB) queueNote(ctx context.Context, p redis.Cmdable, kind social.NoteKind, target, post, actor string, to ...string) {
	if len(to) == 0 {
		return
	}
	p.XAdd(ctx, &redis.XAddArgs{Stream: s.fanoutStream(target), Values: []any{
		jobOp, opNote, noteKind, string(kind), noteTarget, target, notePost, post, noteActor, actor, noteTo, strings.Join(to, ","),
		noteAt, s.now().UnixMilli(),
	}})
}

// notifyJob queues a note job on its own (for paths whose write is a
// script that has already run); an error is the caller's to return, so
// the mutation is retried and the job queued.
func (s *DB) notifyJob(ctx context.Context, kind social.NoteKind, target, post, actor string, to ...string) error {
	if len(to) == 0 {
		return nil
	}
	var cmds []redis.Cmder
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		s.queueNote(ctx, p, kind, target, post, actor, to...)
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("queue %s notification: %w", strings.ToLower(string(kind)), err)
	}
	return nil
}

// noteGone, set in a job, says the action is undone whatever Redis still
// holds: a deleted post's job runs before the post's hash is gone.
const noteGone = "gone"

// syncNote carries out a note job: for each recipient, whether the action
// stands, then noteScript. Jobs of one action may run at once (several
// workers, a pipeline split over Cluster nodes): after the script it reads
// whether the action stands again and goes round until nothing changed
// in between, so the last state read is the one written.
func (s *DB) syncNote(ctx context.Context, job map[string]string) error {
	kind, target, post, actor := social.NoteKind(job[noteKind]), job[noteTarget], job[notePost], job[noteActor]
	to := strings.Split(job[noteTo], ",")
	if !social.IsID(target) || !social.IsID(actor) || (post != "" && !social.IsID(post)) {
		return fmt.Errorf("malformed note job %v", job)
	}
	t := noteTruth{kind: kind, target: target, post: post, actor: actor, to: to, gone: job[noteGone] == "1"}
	at := strconv.FormatInt(s.now().UnixMilli(), 10)
	if v, err := strconv.ParseInt(job[noteAt], 10, 64); err == nil && v > 0 {
		at = job[noteAt]
	}
	present, err := s.readTruth(ctx, &t)
	for range 3 {
		if err != nil {
			return fmt.Errorf("read %s by %s: %w", strings.ToLower(string(kind)), actor, err)
		}
		if err := s.applyNote(ctx, &t, present, at); err != nil {
			return fmt.Errorf("notify of %s by %s: %w", strings.ToLower(string(kind)), actor, err)
		}
		var again []bool
		if again, err = s.readTruth(ctx, &t); err == nil && slices.Equal(again, present) {
			return nil
		}
		present = again
	}
	return fmt.Errorf("notify of %s by %s: the action kept changing", strings.ToLower(string(kind)), actor)
}

// noteTruth is what a note job is about, and what reading it found.
type noteTruth struct {
	kind                   social.NoteKind
	target, post, actor    string
	to                     []string
	gone                   bool
	group, postID, comment string
	postAuthor             string // the post's author, for a mention (checked against the recipient's blocks)
}

// readTruth reads whether the job's action stands, for each recipient.
func (s *DB) readTruth(ctx context.Context, t *noteTruth) ([]bool, error) {
	k := s.keys
	var truth redis.Cmder
	var access *visibilityCheck
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		switch t.kind {
		case social.NoteLike:
			truth, t.group, t.postID = p.ZScore(ctx, k.Likers(t.target), t.actor), "like:"+t.target, t.target
		case social.NoteFollow:
			truth, t.group = p.ZScore(ctx, k.Followers(t.to[0]), t.actor), "follow"
		case social.NoteComment:
			truth, t.group, t.postID, t.comment = p.HGet(ctx, k.PostComment(t.post, t.target), "author"), "comment:"+t.target, t.post, t.target
		case social.NoteRepost:
			truth, t.group, t.postID = p.HGet(ctx, k.Post(t.target), "repost"), "repost:"+t.post, t.post
		case social.NoteMention:
			// A mention in a post (post == "") or in a comment on post.
			if t.post == "" {
				truth, t.group, t.postID = p.HGet(ctx, k.Post(t.target), postAuthorField), "mention:"+t.target, t.target
			} else {
				truth, t.group, t.postID, t.comment = p.HGet(ctx, k.PostComment(t.post, t.target), "author"), "mention:c"+t.target, t.post, t.target
			}
			access = s.queueAccess(ctx, p, t.postID, t.to)
		default:
			return fmt.Errorf("note job of unknown kind %q", t.kind)
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return nil, err
	}
	var stands bool
	switch c := truth.(type) {
	case *redis.FloatCmd:
		stands = c.Err() == nil
	case *redis.StringCmd:
		stands = c.Val() != "" && (t.kind != social.NoteRepost || c.Val() == t.post)
	}
	if access != nil {
		t.postAuthor = access.author()
	}
	out := make([]bool, len(t.to))
	for i, r := range t.to {
		out[i] = stands && !t.gone && r != t.actor && (access == nil || access.allows(i))
	}
	return out, nil
}

// applyNote runs noteScript for each recipient.
func (s *DB) applyNote(ctx context.Context, t *noteTruth, present []bool, at string) error {
	k := s.keys
	window, limit := s.feed.noteWindow(), s.feed.noteCap()
	_, err := s.pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range t.to {
			if !social.IsID(r) {
				continue
			}
			noteScript.EvalSha(ctx, p,
				[]string{k.Notes(r), k.NoteData(r), k.NoteOpen(r), k.NoteMeta(r), k.Blocks(r), k.BlockedBy(r), k.Mutes(r)},
				k.NoteActors(r, ""), t.group, t.actor, boolArg(present[i]), at, window.Milliseconds(),
				string(t.kind), t.postID, t.comment, limit, k.LiveNotes(r), s.publishCommand(), t.postAuthor)
		}
		return nil
	})
	return err
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// visibilityCheck is whether users may see one post by its audience
// (blocks are noteScript's to check).
type visibilityCheck struct {
	hash      *redis.SliceCmd
	only, not []*redis.BoolCmd
	users     []string
}

func (s *DB) queueAccess(ctx context.Context, p redis.Pipeliner, postID string, users []string) *visibilityCheck {
	c := &visibilityCheck{hash: p.HMGet(ctx, s.keys.Post(postID), postAuthorField, "vis"), users: users}
	for _, u := range users {
		c.only = append(c.only, p.SIsMember(ctx, s.keys.PostOnlyTo(postID), u))
		c.not = append(c.not, p.SIsMember(ctx, s.keys.PostNotTo(postID), u))
	}
	return c
}

// author is the post's author ("" when it is gone).
func (c *visibilityCheck) author() string {
	a, _ := c.hash.Val()[0].(string)
	return a
}

func (c *visibilityCheck) allows(i int) bool {
	vals := c.hash.Val()
	author, _ := vals[0].(string)
	vis, _ := vals[1].(string)
	if author == "" {
		return false
	}
	return social.PostAccess(c.users[i], &social.Post{AuthorID: author, Visibility: social.Visibility(vis)},
		social.AccessFacts{InOnlyTo: c.only[i].Val(), InNotTo: c.not[i].Val()}) == social.Visible
}

// Notifications reads a page of viewerID's notifications, most recently
// active first, each with its first actors ids (newest first), and the
// unread count; one round trip.
func (s *NotificationService) Notifications(ctx context.Context, viewerID string, p social.PageRequest, actors int) (social.Notifications, error) {
	if err := social.ValidateFirst(p.First); err != nil {
		return social.Notifications{}, err
	}
	cursor := ""
	if p.After != "" {
		n, err := parseCursor(p.After)
		if err != nil {
			return social.Notifications{}, err
		}
		cursor = strconv.FormatInt(n, 10)
	}
	read, unread, rows, err := s.notePage(ctx, viewerID, cursor, p.First+1, actors, false)
	if err != nil {
		return social.Notifications{}, err
	}
	out := social.Notifications{Unread: unread}
	out.HasNext = len(rows) > p.First
	for _, n := range rows[:min(len(rows), p.First)] {
		id, _ := strconv.ParseInt(n.ID, 10, 64)
		n.Read = id <= read
		out.Items = append(out.Items, n)
		out.Cursors = append(out.Cursors, social.EncodeCursor(n.ID))
	}
	return out, nil
}

// NotificationsAfter reads up to n of viewerID's notifications raised
// after the activity number after, oldest first (live streams).
func (s *NotificationService) NotificationsAfter(ctx context.Context, viewerID string, after int64, n, actors int) ([]*social.Notification, error) {
	read, _, rows, err := s.notePage(ctx, viewerID, strconv.FormatInt(after, 10), n, actors, true)
	for _, r := range rows {
		id, _ := strconv.ParseInt(r.ID, 10, 64)
		r.Read = id <= read
	}
	return rows, err
}

// NewestNotification is the activity number of viewerID's newest
// notification (0 for none): where a live stream without since starts.
func (s *NotificationService) NewestNotification(ctx context.Context, viewerID string) (int64, error) {
	n, err := s.rdb.HGet(ctx, s.keys.NoteMeta(viewerID), "act").Int64()
	if err != nil && !isNil(err) {
		return 0, fmt.Errorf("read notifications of %s: %w", viewerID, err)
	}
	return n, nil
}

func (s *DB) notePage(ctx context.Context, viewerID, cursor string, n, actors int, newer bool) (int64, int, []*social.Notification, error) {
	if !social.IsID(viewerID) {
		return 0, 0, nil, social.Errorf(social.Unauthenticated, "authentication required")
	}
	k := s.keys
	res, err := notePageScript.Run(ctx, s.rdb, []string{k.Notes(viewerID), k.NoteData(viewerID), k.NoteMeta(viewerID)},
		k.NoteActors(viewerID, ""), cursor, n, actors, boolArg(newer)).Slice()
	if err != nil || len(res) != 3 {
		return 0, 0, nil, fmt.Errorf("read notifications of %s: %v %w", viewerID, res, err)
	}
	rs, _ := res[0].(string)
	read, _ := strconv.ParseInt(rs, 10, 64)
	unread, _ := res[1].(int64)
	flat, _ := res[2].([]any)
	var out []*social.Notification
	for i := 0; i+3 < len(flat); i += 4 {
		act, _ := flat[i].(string)
		data, _ := flat[i+1].(string)
		count, _ := flat[i+2].(int64)
		f := strings.SplitN(data, "|", 5)
		if len(f) < 5 {
			continue
		}
		ms, _ := strconv.ParseInt(f[3], 10, 64)
		note := &social.Notification{ID: act, Kind: social.NoteKind(f[0]), PostID: f[1], CommentID: f[2],
			ActorsCount: int(count), UpdatedAt: time.UnixMilli(ms).UTC()}
		note.Actors = strs(flat[i+3])
		out = append(out, note)
	}
	return read, int(unread), out, nil
}

// MarkNotificationsRead marks viewerID's notifications read up to upTo (a
// notification id; all of them for ""), never unmarking newer ones, and
// returns the unread count after.
func (s *NotificationService) MarkNotificationsRead(ctx context.Context, viewerID, upTo string) (int, error) {
	if upTo != "" && !social.IsID(upTo) {
		return 0, social.Errorf(social.NotFound, "notification %s not found", upTo)
	}
	n, err := noteReadScript.Run(ctx, s.rdb, []string{s.keys.Notes(viewerID), s.keys.NoteMeta(viewerID)}, upTo).Int()
	if err != nil {
		return 0, fmt.Errorf("mark notifications of %s read: %w", viewerID, err)
	}
	return n, nil
}

// NoteChannel is the channel announcing viewerID's notifications.
func (s *NotificationService) NoteChannel(viewerID string) string { return s.keys.LiveNotes(viewerID) }

// notifyPost brings the notifications of a post in line with whether it
// exists: the repost's, to the original's author, and the mentions'.
// The fan-out worker runs it for a new post and, with gone, for a deleted
// one (its job may run before the post's hash is deleted).
func (s *DB) notifyPost(ctx context.Context, post, author, repost, rauthor string, mentions []string, gone bool) error {
	g := boolArg(gone)
	if repost != "" && social.IsID(rauthor) {
		err := s.syncNote(ctx, map[string]string{noteKind: string(social.NoteRepost), noteTarget: post, notePost: repost, noteActor: author, noteTo: rauthor, noteGone: g})
		if err != nil {
			return err
		}
	}
	if len(mentions) > 0 {
		return s.syncNote(ctx, map[string]string{noteKind: string(social.NoteMention), noteTarget: post, noteActor: author, noteTo: strings.Join(mentions, ","), noteGone: g})
	}
	return nil
}

// opNotePurge is the job that takes an actor out of a recipient's
// notifications (purgeNotes).
const opNotePurge = "notepurge"

// queuePurge queues taking actor out of each recipient's notifications.
func (s *DB) queuePurge(ctx context.Context, actor string, recipients ...string) error {
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, r := range recipients {
			p.XAdd(ctx, &redis.XAddArgs{Stream: s.fanoutStream(r), Values: []any{jobOp, opNotePurge, noteActor, actor, noteTo, r}})
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("queue taking %s out of notifications: %w", actor, err)
	}
	return nil
}

// purgeNotes takes an actor out of a recipient's notifications: after a
// block either way or a mute, nothing the actor did shows there. The
// script is idempotent.
func (s *DB) purgeNotes(ctx context.Context, job map[string]string) error {
	actor, r := job[noteActor], job[noteTo]
	if !social.IsID(actor) || !social.IsID(r) {
		return fmt.Errorf("malformed notification purge job %v", job)
	}
	k := s.keys
	err := notePurgeScript.Run(ctx, s.rdb, []string{k.Notes(r), k.NoteData(r), k.NoteOpen(r)}, k.NoteActors(r, ""), actor).Err()
	if err != nil {
		return fmt.Errorf("take %s out of the notifications of %s: %w", actor, r, err)
	}
	return nil
}
