package redisstore

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
)

// The note jobs the fan-out worker runs: whether the action a job names
// still stands, and the recipients' notifications made to reflect it
// (notes.go explains the approach).

// noteGone, set in a job, says the action is undone whatever Redis still
// holds: a deleted post's job runs before the post's hash is gone.
const noteGone = "gone"

// syncNote carries out a note job: for each recipient, whether the action
// stands, then noteScript. Jobs of one action may run at once (several
// workers, a pipeline split over Cluster nodes): after the script it reads
// whether the action stands again and goes round until nothing changed
// in between, so the last state read is the one written.
func (s *FanoutService) syncNote(ctx context.Context, job map[string]string) error {
	kind, target, post, actor := social.NoteKind(job[noteKind]), job[noteTarget], job[notePost], job[noteActor]
	to := strings.Split(job[noteTo], ",")
	if !social.IsID(target) || !social.IsID(actor) || (post != "" && !social.IsID(post)) {
		return fmt.Errorf("malformed note job %v", job)
	}
	t := noteTruth{kind: kind, target: target, post: post, actor: actor, to: to, gone: job[noteGone] == "1", stamp: job[jobEdited]}
	at := strconv.FormatInt(s.set.now().UnixMilli(), 10)
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
		score := t.score
		var again []bool
		if again, err = s.readTruth(ctx, &t); err == nil && slices.Equal(again, present) && t.score == score {
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
	postAuthor             string          // the post's author, for a mention (checked against the recipient's blocks)
	stamp                  string          // an edit's time (ms), for EDIT: each edit is a notification of its own
	mentioned              *redis.SliceCmd // a post's author and mentions, for a mention in a post
	score                  string          // when the actor acted, by the source's score (aggregated kinds), "" when it does not stand
}

// readTruth reads whether the job's action stands, for each recipient.
func (s *FanoutService) readTruth(ctx context.Context, t *noteTruth) ([]bool, error) {
	k := s.keys
	var truth redis.Cmder
	var access *visibilityCheck
	cmds, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		switch t.kind {
		case social.NoteLike:
			truth, t.group, t.postID = p.ZScore(ctx, k.Likers(t.target), t.actor), "like:"+t.target, t.target
		case social.NoteFollow:
			truth, t.group = p.ZScore(ctx, k.Followers(t.to[0]), t.actor), "follow"
		case social.NoteFollowRequest:
			truth, t.group = p.ZScore(ctx, k.FollowRequests(t.to[0]), t.actor), "freq:"+t.actor
		case social.NoteComment:
			truth, t.group, t.postID, t.comment = p.HGet(ctx, k.PostComment(t.post, t.target), commentRecord.name("author")), "comment:"+t.target, t.post, t.target
		case social.NoteReply:
			truth, t.group, t.postID, t.comment = p.HGet(ctx, k.PostComment(t.post, t.target), commentRecord.name("author")), "reply:"+t.target, t.post, t.target
		case social.NoteEdit:
			truth, t.group, t.postID = p.HGet(ctx, k.Post(t.target), postAuthorField), "edit:"+t.target+":"+t.stamp, t.target
		case social.NoteRepost:
			truth, t.group, t.postID = p.HGet(ctx, k.Post(t.target), postRecord.name("repost")), "repost:"+t.post, t.post
		case social.NoteMention:
			// A mention in a post (post == "") or in a comment on post.
			// A post's mentions change with an edit: the recipient must be
			// among them still.
			if t.post == "" {
				t.mentioned = postMentioned.queue(ctx, p, k.Post(t.target))
				truth, t.group, t.postID = p.HGet(ctx, k.Post(t.target), postAuthorField), "mention:"+t.target, t.target
			} else {
				truth, t.group, t.postID, t.comment = p.HGet(ctx, k.PostComment(t.post, t.target), commentRecord.name("author")), "mention:c"+t.target, t.post, t.target
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
	t.score = ""
	switch c := truth.(type) {
	case *redis.FloatCmd:
		stands = c.Err() == nil
		if stands {
			t.score = strconv.FormatFloat(c.Val(), 'f', -1, 64)
		}
	case *redis.StringCmd:
		stands = c.Val() != "" && (t.kind != social.NoteRepost || c.Val() == t.post)
	}
	if access != nil {
		t.postAuthor = access.author()
		if err := access.readLock(ctx, s.rdb, k); err != nil {
			return nil, err
		}
	}
	var mentioned []string
	if t.mentioned != nil {
		var row postRow
		postMentioned.decode(&row, t.mentioned.Val())
		mentioned = row.post.Mentions
	}
	out := make([]bool, len(t.to))
	for i, r := range t.to {
		out[i] = stands && !t.gone && r != t.actor && (access == nil || access.allows(i)) &&
			(t.mentioned == nil || slices.Contains(mentioned, r))
	}
	return out, nil
}

// postMentioned is what the truth of a mention in a post reads: whom the
// post mentions now.
var postMentioned = postRecord.view("mentions")

// applyNote runs noteScript, or noteAggScript for a kind read from its
// source, for each recipient, then checks the windows noteAggScript asks
// for.
func (s *FanoutService) applyNote(ctx context.Context, t *noteTruth, present []bool, at string) error {
	k := s.keys
	window, limit := s.set.feed.noteWindow(), s.set.feed.noteCap()
	agg := fromSource(t.kind)
	replies := make([]*redis.Cmd, len(t.to))
	_, err := pipelined(ctx, s.rdb, func(p redis.Pipeliner) error {
		for i, r := range t.to {
			if !social.IsID(r) {
				continue
			}
			if agg {
				replies[i] = noteAggScript.EvalSha(ctx, p,
					[]string{k.Notes(r), k.NoteData(r), k.NoteOpen(r), k.NoteMeta(r), k.Blocks(r), k.BlockedBy(r), k.Mutes(r)},
					k.NoteActors(r, ""), t.group, t.actor, boolArg(present[i]), at, window.Milliseconds(),
					string(t.kind), t.postID, limit, k.LiveNotes(r), publishCommand(s.set.publishCmd), t.score)
				continue
			}
			noteScript.EvalSha(ctx, p,
				[]string{k.Notes(r), k.NoteData(r), k.NoteOpen(r), k.NoteMeta(r), k.Blocks(r), k.BlockedBy(r), k.Mutes(r)},
				k.NoteActors(r, ""), t.group, t.actor, boolArg(present[i]), at, window.Milliseconds(),
				string(t.kind), t.postID, t.comment, limit, k.LiveNotes(r), publishCommand(s.set.publishCmd), t.postAuthor)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, c := range replies {
		if c == nil {
			continue
		}
		if res, _ := c.Slice(); len(res) == 2 && res[1] == int64(1) {
			if err := s.checkWindows(ctx, t.to[i], t.group); err != nil {
				return err
			}
		}
	}
	return nil
}

// visibilityCheck is whether users may see one post by its audience
// (blocks are noteScript's to check).
type visibilityCheck struct {
	hash      *redis.SliceCmd
	only, not []*redis.BoolCmd
	users     []string
	locks     authorLocks // the author's lock, and who of users follows them (readLock)
}

// readLock reads the post author's lock and the users' follows of them
// (the author is known only once the hash is read: one more round trip,
// in the worker).
func (c *visibilityCheck) readLock(ctx context.Context, rdb redis.UniversalClient, k Keys) error {
	author := c.author()
	if author == "" {
		return nil
	}
	c.locks = authorLocks{follows: map[string]bool{}}
	var flags *redis.StringCmd
	follows := make([]*redis.FloatCmd, len(c.users))
	cmds, err := rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		flags = p.HGet(ctx, k.AuthorFlags(), author)
		for i, u := range c.users {
			if social.IsID(u) {
				follows[i] = p.ZScore(ctx, k.Following(u), author)
			}
		}
		return nil
	})
	if err := pipelineErr(cmds, err); err != nil {
		return fmt.Errorf("read the lock of %s: %w", author, err)
	}
	c.locks.flags = map[string]authorFlags{author: authorFlags(flags.Val())}
	for i, f := range follows {
		if f != nil && f.Err() == nil {
			c.locks.follows[c.users[i]] = true
		}
	}
	return nil
}

func (s *FanoutService) queueAccess(ctx context.Context, p redis.Pipeliner, postID string, users []string) *visibilityCheck {
	c := &visibilityCheck{hash: postAudience.queue(ctx, p, s.keys.Post(postID)), users: users}
	for _, u := range users {
		c.only = append(c.only, p.SIsMember(ctx, s.keys.PostOnlyTo(postID), u))
		c.not = append(c.not, p.SIsMember(ctx, s.keys.PostNotTo(postID), u))
	}
	return c
}

// postAudience is what the check reads of the post's hash.
var postAudience = postRecord.view("author", "vis")

// post is the post's author and visibility (no author when it is gone).
func (c *visibilityCheck) post() *social.Post {
	var r postRow
	postAudience.decode(&r, c.hash.Val())
	return &r.post
}

// author is the post's author ("" when it is gone).
func (c *visibilityCheck) author() string { return c.post().AuthorID }

func (c *visibilityCheck) allows(i int) bool {
	p := c.post()
	if p.AuthorID == "" {
		return false
	}
	return social.PostAccess(c.users[i], p, social.AccessFacts{InOnlyTo: c.only[i].Val(), InNotTo: c.not[i].Val(),
		AuthorLocked: c.locks.locked(p.AuthorID), FollowsAuthor: c.locks.follows[c.users[i]]}) == social.Visible
}

// notifyPost brings the notifications of a post in line with whether it
// exists: the repost's, to the original's author, and the mentions'.
// The fan-out worker runs it for a new post and, with gone, for a deleted
// one (its job may run before the post's hash is deleted).
func (s *FanoutService) notifyPost(ctx context.Context, post, author, repost, rauthor string, mentions []string, gone bool) error {
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

// purgeNotes takes an actor out of a recipient's notifications: after a
// block either way or a mute, nothing the actor did shows there. The
// script is idempotent.
func (s *FanoutService) purgeNotes(ctx context.Context, job map[string]string) error {
	actor, r := job[noteActor], job[noteTo]
	if !social.IsID(actor) || !social.IsID(r) {
		return fmt.Errorf("malformed notification purge job %v", job)
	}
	k := s.keys
	err := notePurgeScript.Run(ctx, s.rdb, []string{k.Notes(r), k.NoteData(r), k.NoteOpen(r)}, k.NoteActors(r, ""), actor).Err()
	if err != nil {
		return fmt.Errorf("take %s out of the notifications of %s: %w", actor, r, err)
	}
	// Aggregated notifications leave the actor out when read; one that
	// had no other actor goes.
	return s.checkWindows(ctx, r)
}
