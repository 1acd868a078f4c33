package redisstore_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// noteView is a notification as the tests compare it.
func noteView(n *social.Notification, name map[string]string) string {
	actors := make([]string, len(n.Actors))
	for i, a := range n.Actors {
		actors[i] = name[a]
	}
	return fmt.Sprintf("%s %s/%d %s", n.Kind, strings.Join(actors, ","), n.ActorsCount, n.PostID)
}

func notesOf(t *testing.T, s *redisstore.Store, u string, name map[string]string) ([]string, int) {
	t.Helper()
	page, err := s.Notifications(context.Background(), u, social.PageRequest{First: 100}, 3)
	feedOK(t, err)
	var out []string
	for _, n := range page.Items {
		out = append(out, noteView(n, name))
	}
	return out, page.Unread
}

// TestNotifications runs each kind of notification through the queue, with
// aggregation, undo and the privacy rules, as a table of steps over one
// network: after each step, the recipient's list is as written.
func TestNotifications(t *testing.T) {
	cfg := feedConfig(redisstore.Push)
	cfg.NoteWindow = time.Hour
	s, rdb := feedStore(t, cfg)
	var clock atomic.Int64
	clock.Store(time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC).UnixMilli())
	s.SetClock(func() time.Time { return time.UnixMilli(clock.Load()) })
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 7)
	owner, a, b, c, muted, insider, outsider := u[0], u[1], u[2], u[3], u[4], u[5], u[6]
	name := map[string]string{owner: "owner", a: "a", b: "b", c: "c", muted: "muted", insider: "insider", outsider: "outsider"}
	ownerName := "u0_" + strings.ReplaceAll(t.Name(), "/", "_")
	feedOK(t, s.Mute(ctx, owner, muted))
	p := feedPost(t, s, owner, social.NewPost{Content: "mine"}).ID
	var comment, mention, repost string

	steps := []struct {
		name string
		do   func()
		want func() []string
	}{
		{"a like", func() { feedOK(t, s.Like(ctx, a, p)) }, func() []string { return []string{"LIKE a/1 " + p} }},
		{"b like joins it", func() { feedOK(t, s.Like(ctx, b, p)) }, func() []string { return []string{"LIKE b,a/2 " + p} }},
		{"own like tells nothing", func() { feedOK(t, s.Like(ctx, owner, p)) }, func() []string { return []string{"LIKE b,a/2 " + p} }},
		{"a muted user's like tells nothing", func() { feedOK(t, s.Like(ctx, muted, p)) }, func() []string { return []string{"LIKE b,a/2 " + p} }},
		{"a like again is idempotent", func() { feedOK(t, s.Like(ctx, a, p)) }, func() []string { return []string{"LIKE b,a/2 " + p} }},
		{"unlike takes the actor out", func() { feedOK(t, s.Unlike(ctx, a, p)) }, func() []string { return []string{"LIKE b/1 " + p} }},
		{"a comment is its own", func() {
			cm, err := s.AddComment(ctx, c, p, "nice")
			feedOK(t, err)
			comment = cm.ID
		}, func() []string { return []string{"COMMENT c/1 " + p, "LIKE b/1 " + p} }},
		{"follows gather", func() { feedOK(t, s.Follow(ctx, a, owner)); feedOK(t, s.Follow(ctx, b, owner)) },
			func() []string { return []string{"FOLLOW b,a/2 ", "COMMENT c/1 " + p, "LIKE b/1 " + p} }},
		{"a mention", func() {
			mention = feedPost(t, s, c, social.NewPost{Content: "hello @" + ownerName}).ID
		}, func() []string {
			return []string{"MENTION c/1 " + mention, "FOLLOW b,a/2 ", "COMMENT c/1 " + p, "LIKE b/1 " + p}
		}},
		{"a mention in a post not for the owner tells nothing", func() {
			feedPost(t, s, c, social.NewPost{Content: "psst @" + ownerName, OnlyTo: []string{insider}})
		}, func() []string {
			return []string{"MENTION c/1 " + mention, "FOLLOW b,a/2 ", "COMMENT c/1 " + p, "LIKE b/1 " + p}
		}},
		{"a repost", func() {
			r, err := s.CreatePost(ctx, a, social.NewPost{RepostOf: p})
			feedOK(t, err)
			repost = r.ID
		}, func() []string {
			return []string{"REPOST a/1 " + p, "MENTION c/1 " + mention, "FOLLOW b,a/2 ", "COMMENT c/1 " + p, "LIKE b/1 " + p}
		}},
		{"deleting the repost, the mention and the comment undoes them", func() {
			feedOK(t, s.DeletePost(ctx, a, repost))
			feedOK(t, s.DeletePost(ctx, c, mention))
			feedOK(t, s.DeleteComment(ctx, c, comment))
		}, func() []string { return []string{"FOLLOW b,a/2 ", "LIKE b/1 " + p} }},
		{"unfollow takes the follow back", func() { feedOK(t, s.Unfollow(ctx, a, owner)) },
			func() []string { return []string{"FOLLOW b/1 ", "LIKE b/1 " + p} }},
		{"after the window a like opens a new notification", func() {
			clock.Add(time.Hour.Milliseconds())
			feedOK(t, s.Like(ctx, c, p))
		}, func() []string { return []string{"LIKE c/1 " + p, "FOLLOW b/1 ", "LIKE b/1 " + p} }},
		{"the last actor leaving takes it away", func() { feedOK(t, s.Unlike(ctx, c, p)) },
			func() []string { return []string{"FOLLOW b/1 ", "LIKE b/1 " + p} }},
		{"a block takes away all the blocked user did", func() { feedOK(t, s.Block(ctx, owner, b)) },
			func() []string { return nil }},
		{"and a mute all the muted user did", func() {
			feedOK(t, s.Like(ctx, c, p))
			drain(t, w)
			feedOK(t, s.Mute(ctx, owner, c))
		}, func() []string { return nil }},
	}
	for _, st := range steps {
		st.do()
		drain(t, w)
		got, _ := notesOf(t, s, owner, name)
		if want := st.want(); !slices.Equal(got, want) {
			t.Fatalf("%s:\n got  %q\n want %q", st.name, got, want)
		}
	}
	// Nobody else was told anything about the owner's post, and the
	// insider was not mentioned.
	for _, v := range []string{a, c, insider, outsider} {
		if got, _ := notesOf(t, s, v, name); len(got) > 0 {
			t.Errorf("%s has notifications %q", name[v], got)
		}
	}
}

// Read state: unreadCount, and marks that only move up.
func TestNotificationsRead(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 4)
	for _, f := range u[1:] {
		p := feedPost(t, s, u[0], social.NewPost{Content: "p"}).ID
		feedOK(t, s.Like(ctx, f, p))
	}
	drain(t, w)
	page, err := s.Notifications(ctx, u[0], social.PageRequest{First: 2}, 1)
	feedOK(t, err)
	if len(page.Items) != 2 || !page.HasNext || page.Unread != 3 || page.Items[0].Read {
		t.Fatalf("first page: %+v", page)
	}
	next, err := s.Notifications(ctx, u[0], social.PageRequest{First: 2, After: page.EndCursor()}, 1)
	feedOK(t, err)
	if len(next.Items) != 1 || next.HasNext || next.Items[0].ID >= page.Items[1].ID {
		t.Fatalf("second page: %+v", next)
	}
	mid := page.Items[1].ID
	for _, tc := range []struct {
		upTo string
		want int
	}{{mid, 1}, {next.Items[0].ID, 1}, {mid, 1}, {"", 0}, {mid, 0}} {
		n, err := s.MarkNotificationsRead(ctx, u[0], tc.upTo)
		feedOK(t, err)
		if n != tc.want {
			t.Fatalf("mark read up to %q: unread %d, want %d", tc.upTo, n, tc.want)
		}
	}
	if _, err := s.MarkNotificationsRead(ctx, u[0], "x"); !social.IsCode(err, social.NotFound) {
		t.Fatalf("malformed id: %v", err)
	}
}

// The list is capped: the least recently active go first.
func TestNotificationsCap(t *testing.T) {
	cfg := feedConfig(redisstore.Push)
	cfg.NoteCap = 3
	s, rdb := feedStore(t, cfg)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 2)
	p := feedPost(t, s, u[0], social.NewPost{}).ID
	var ids []string
	for i := range 5 {
		c, err := s.AddComment(ctx, u[1], p, fmt.Sprint("comment ", i))
		feedOK(t, err)
		ids = append(ids, c.ID)
		drain(t, w) // one at a time: workers run jobs concurrently
	}
	page, err := s.Notifications(ctx, u[0], social.PageRequest{First: 10}, 1)
	feedOK(t, err)
	var got []string
	for _, n := range page.Items {
		got = append(got, n.CommentID)
	}
	if want := []string{ids[4], ids[3], ids[2]}; !slices.Equal(got, want) {
		t.Fatalf("kept %v, want %v", got, want)
	}
}

// A deleted post's job takes its mentions back even when it runs before
// the post's hash is deleted; a mention in a comment on the post of
// someone in a block with the mentioned user tells them nothing.
func TestNotesGone(t *testing.T) {
	s, rdb := feedStore(t)
	w := feedWorker(t, s, rdb)
	ctx := context.Background()
	u := feedUsers(t, s, 3)
	a, v, c := u[0], u[1], u[2]
	name := map[string]string{a: "a", v: "v", c: "c"}
	vName := "u1_" + strings.ReplaceAll(t.Name(), "/", "_")
	p := feedPost(t, s, a, social.NewPost{Content: "hi @" + vName})
	drain(t, w)
	if got, _ := notesOf(t, s, v, name); len(got) != 1 {
		t.Fatalf("mention: %q", got)
	}
	// The delete job, run while the hash is still there.
	feedOK(t, s.HandleFanoutJob(ctx, map[string]string{"op": "delete", "post": p.ID, "author": a, "mentions": v}))
	if got, _ := notesOf(t, s, v, name); len(got) != 0 {
		t.Fatalf("after the delete job: %q", got)
	}

	other := feedPost(t, s, a, social.NewPost{Content: "public"})
	feedOK(t, s.Block(ctx, a, v))
	_, err := s.AddComment(ctx, c, other.ID, "look @"+vName)
	feedOK(t, err)
	drain(t, w)
	if got, _ := notesOf(t, s, v, name); len(got) != 0 {
		t.Fatalf("a mention on a blocker's post: %q", got)
	}
}
