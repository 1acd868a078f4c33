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
type NotificationService struct {
	rdb  redis.UniversalClient
	keys Keys
	set  *settings
}

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
// notification reflect it: with noteScript, adding the actor, or taking
// it out (a deleted comment or repost); for likes and follows, whose
// actors are read from their source (notes_agg.go), with noteAggScript,
// raising the notification or opening a window, while an unlike or an
// unfollow needs only the source's write and a check for a window left
// without actors. So a job run twice, or jobs of one action run out of
// order, end the same, and a job is never lost: it stays pending until it
// is done, as fan-out's are. The scripts check the recipient's blocks and
// mutes in the recipient's slot; the worker checks a mentioned user's
// access to the post.

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

// queueNote queues in p a note job acted at at, on target's shard of the
// fan-out queue (shards of them).
func queueNote(ctx context.Context, p redis.Cmdable, k Keys, shards int, at time.Time, kind social.NoteKind, target, post, actor string, to ...string) {
	if len(to) == 0 {
		return
	}
	p.XAdd(ctx, &redis.XAddArgs{Stream: fanoutStream(k, shards, target), Values: []any{
		jobOp, opNote, noteKind, string(kind), noteTarget, target, notePost, post, noteActor, actor, noteTo, strings.Join(to, ","),
		noteAt, at.UnixMilli(),
	}})
}

// notifyJob queues a note job on its own (for paths whose write is a
// script that has already run); an error is the caller's to return, so
// the mutation is retried and the job queued.
func (s *GraphService) notifyJob(ctx context.Context, kind social.NoteKind, target, post, actor string, to ...string) error {
	if len(to) == 0 {
		return nil
	}
	var cmds []redis.Cmder
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		queueNote(ctx, p, s.keys, s.set.feed.FanoutShards, s.set.now(), kind, target, post, actor, to...)
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("queue %s notification: %w", strings.ToLower(string(kind)), err)
	}
	return nil
}

func boolArg(b bool) string {
	if b {
		return "1"
	}
	return "0"
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

// notePage reads up to n of viewerID's notifications beyond cursor (see
// notePageScript). An aggregated notification found without actors (its
// undo's job still to run) is left out, and as many more are read in its
// place, so that fewer than n means there are no more: a page's hasNext
// and a live stream's catch-up rely on it.
func (s *NotificationService) notePage(ctx context.Context, viewerID, cursor string, n, actors int, newer bool) (int64, int, []*social.Notification, error) {
	if !social.IsID(viewerID) {
		return 0, 0, nil, social.Errorf(social.Unauthenticated, "authentication required")
	}
	filters := newViewerFilters(ctx, viewerID, true)
	read, unread, out, last, full, err := s.notePageOnce(ctx, viewerID, cursor, n, actors, newer, filters)
	for err == nil && full && len(out) < n {
		var more []*social.Notification
		// At least 10 a round, so that a run of empty ones costs few.
		_, _, more, last, full, err = s.notePageOnce(ctx, viewerID, last, max(n-len(out), 10), actors, newer, filters)
		out = append(out, more...)
	}
	return read, unread, out[:min(len(out), n)], err
}

// notePageOnce is one read of notePage: also the activity number of the
// last notification read, aggregated ones without actors included, and
// whether as many as n were. The viewer's keyword filters are read in the
// script's pipeline (the first time), and the notifications about posts
// they hide in NOTIFICATIONS are left out (filteredNotes).
func (s *NotificationService) notePageOnce(ctx context.Context, viewerID, cursor string, n, actors int, newer bool, filters *viewerFilters) (read int64, unread int, out []*social.Notification, last string, full bool, err error) {
	k := s.keys
	var page *redis.Cmd
	cmds, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		page = notePageScript.EvalSha(ctx, p, []string{k.Notes(viewerID), k.NoteData(viewerID), k.NoteMeta(viewerID), k.Blocks(viewerID), k.BlockedBy(viewerID), k.Mutes(viewerID)},
			k.NoteActors(viewerID, ""), cursor, n, actors, boolArg(newer), noteExcludedCap)
		filters.queue(ctx, p, k)
		return nil
	})
	err = pipelineErr(cmds, err)
	var res []any
	if err == nil {
		res, err = page.Slice()
	}
	if err != nil || len(res) != 5 {
		return 0, 0, nil, "", false, fmt.Errorf("read notifications of %s: %v %w", viewerID, res, err)
	}
	rs, _ := res[0].(string)
	read, _ = strconv.ParseInt(rs, 10, 64)
	u, _ := res[1].(int64)
	flat, _ := res[2].([]any)
	windows := map[int]noteWindow{}
	for i := 0; i+3 < len(flat); i += 4 {
		act, _ := flat[i].(string)
		last = act
		data, _ := flat[i+1].(string)
		count, _ := flat[i+2].(int64)
		var row noteRow
		if noteRecord.unpack(&row, data) <= noteRecord.at("group") {
			continue // not a notification's value
		}
		note := &row.note
		note.ID, note.ActorsCount = act, int(count)
		note.Actors = strs(flat[i+3])
		if w, ok := k.parseWindow(viewerID, &row); ok {
			windows[len(out)] = w
		}
		out = append(out, note)
	}
	more, _ := res[4].(int64)
	out, err = s.readWindows(ctx, viewerID, out, windows, excludedFor(viewerID, strs(res[3]), more == 1), actors)
	if err == nil {
		out, err = s.filteredNotes(ctx, viewerID, filters.matcher(ctx, s.set.now()), out)
	}
	return read, int(u), out, last, len(flat) >= 4*n, err
}

// filteredNotes leaves out of notes those about a post that m hides in
// NOTIFICATIONS (its text or, for a repost, its original's): one pipeline
// of the posts' hashes, only when a filter applies there.
func (s *NotificationService) filteredNotes(ctx context.Context, viewerID string, m *social.Matcher, notes []*social.Notification) ([]*social.Notification, error) {
	if !m.Applies(social.FilterNotifications) {
		return notes, nil
	}
	var ids []string
	for _, n := range notes {
		if social.IsID(n.PostID) {
			ids = append(ids, n.PostID)
		}
	}
	if len(ids) == 0 {
		return notes, nil
	}
	r := s.set.postReader(s.rdb, s.keys)
	byID := make(map[string]*social.Post, len(ids))
	if err := r.readTexts(ctx, ids, byID); err != nil {
		return nil, fmt.Errorf("notifications of %s: %w", viewerID, err)
	}
	posts := make([]*social.Post, len(ids))
	for i, id := range ids {
		posts[i] = byID[id]
	}
	kept, err := r.dropFiltered(ctx, m, social.FilterNotifications, viewerID, slices.Clone(posts), nil)
	if err != nil {
		return nil, err
	}
	hidden := map[string]bool{}
	for i, p := range posts {
		if p != nil && kept[i] == nil {
			hidden[p.ID] = true
		}
	}
	return slices.DeleteFunc(notes, func(n *social.Notification) bool { return hidden[n.PostID] }), nil
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

// opNotePurge is the job that takes an actor out of a recipient's
// notifications (purgeNotes).
const opNotePurge = "notepurge"

// queuePurge queues taking actor out of each recipient's notifications.
func (s *GraphService) queuePurge(ctx context.Context, actor string, recipients ...string) error {
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, r := range recipients {
			p.XAdd(ctx, &redis.XAddArgs{Stream: fanoutStream(s.keys, s.set.feed.FanoutShards, r), Values: []any{jobOp, opNotePurge, noteActor, actor, noteTo, r}})
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("queue taking %s out of notifications: %w", actor, err)
	}
	return nil
}
