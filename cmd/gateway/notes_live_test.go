package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/coder/websocket/wsjson"

	"github.com/socialgw/gateway/internal/gateway/gatewaytest"
	"github.com/socialgw/gateway/internal/redistest"
)

// Live notifications end to end, over the gateway processes and the
// restartable redis-server of live_test.go, with a graphql-transport-ws
// client written here.

// noteEvent is one message of a notificationAdded subscription: a
// notification as "KIND count actor,actor…", or the message's type when
// it is not a notification.
type noteEvent struct {
	id, view string
	at       time.Time // when the client read it
}

// noteSub is an open notificationAdded subscription.
type noteSub struct {
	events chan noteEvent
}

// subscribeNotes subscribes to the notifications of the holder of token
// at base, from since ("" for from now on); it ends with the test.
func subscribeNotes(t testing.TB, base, token, since string) *noteSub {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(base, "http")+"/query",
		&websocket.DialOptions{Subprotocols: []string{"graphql-transport-ws"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.CloseNow() })
	vars := map[string]any{}
	if since != "" {
		vars["since"] = since
	}
	q, _ := json.Marshal(map[string]any{"variables": vars,
		"query": `subscription($since: ID) { notificationAdded(since: $since) { id kind actorsCount actors { name } } }`})
	for _, m := range []map[string]any{
		{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + token}},
		{"id": "1", "type": "subscribe", "payload": json.RawMessage(q)},
	} {
		if err := wsjson.Write(ctx, c, m); err != nil {
			t.Fatal(err)
		}
	}
	s := &noteSub{events: make(chan noteEvent, 100)}
	go s.read(ctx, c)
	return s
}

func (s *noteSub) read(ctx context.Context, c *websocket.Conn) {
	defer close(s.events)
	for {
		var m struct {
			Type    string
			Payload json.RawMessage
		}
		if err := wsjson.Read(ctx, c, &m); err != nil {
			return
		}
		switch m.Type {
		case "ping":
			_ = wsjson.Write(ctx, c, map[string]string{"type": "pong"})
			continue
		case "connection_ack", "pong", "ka":
			continue
		}
		var p struct {
			Data struct {
				NotificationAdded *struct {
					ID, Kind    string
					ActorsCount int
					Actors      []struct{ Name string }
				}
			}
		}
		_ = json.Unmarshal(m.Payload, &p)
		n := p.Data.NotificationAdded
		if m.Type != "next" || n == nil {
			s.events <- noteEvent{view: m.Type + " " + string(m.Payload)}
			continue
		}
		names := make([]string, len(n.Actors))
		for i, a := range n.Actors {
			names[i] = a.Name
		}
		s.events <- noteEvent{id: n.ID, view: fmt.Sprintf("%s %d %s", n.Kind, n.ActorsCount, strings.Join(names, ",")), at: time.Now()}
	}
}

// next is the next event, failing after timeout.
func (s *noteSub) next(t *testing.T, timeout time.Duration) noteEvent {
	t.Helper()
	select {
	case e, ok := <-s.events:
		if !ok {
			t.Fatal("the subscription closed")
		}
		return e
	case <-time.After(timeout):
		t.Fatalf("no notification within %s", timeout)
	}
	return noteEvent{}
}

// expect reads the next event and checks it is want, with an id above
// the previous one's (a notification that grows arrives again, raised).
func (s *noteSub) expect(t *testing.T, after string, want string) string {
	t.Helper()
	e := s.next(t, 30*time.Second)
	if e.view != want {
		t.Fatalf("event %q, want %q", e.view, want)
	}
	if after != "" && atoi(t, e.id) <= atoi(t, after) {
		t.Fatalf("event id %s not above the previous %s", e.id, after)
	}
	return e.id
}

// quiet checks nothing more arrives for a while.
func (s *noteSub) quiet(t *testing.T) {
	t.Helper()
	select {
	case e := <-s.events:
		t.Fatalf("extra event %+v", e)
	case <-time.After(300 * time.Millisecond):
	}
}

func atoi(t *testing.T, s string) int64 {
	t.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		t.Fatalf("id %q: %v", s, err)
	}
	return n
}

// until runs a mutation until it succeeds: after a Redis restart the
// gateway reconnects on the next command.
func until(t *testing.T, base string, u liveUser, doc string, vars map[string]any) {
	t.Helper()
	redistest.Eventually(t, 30*time.Second, doc+" to succeed after the restart", func() bool {
		return len(gatewaytest.Post(t, base, u.token, doc, vars).Errors) == 0
	})
}

// TestLiveNotificationsAcrossGatewaysAndRestart likes a post through one
// gateway process while its author listens on the other: the like
// arrives, and arrives again, raised, as it grows; Redis is then killed
// and restarted under the open subscription, which goes on without an
// error; a second subscription resumed with since gets what rose after
// since once, and both hear of a follow after.
func TestLiveNotificationsAcrossGatewaysAndRestart(t *testing.T) {
	f := newRedisFixture(t, 15*time.Minute)
	if f.srv == nil {
		t.Skip("restarts one redis-server; on a cluster, a master's failover is faulttest's")
	}
	a := startGatewayProcess(t, f.env)
	b := startGatewayProcess(t, f.env)
	owner, x, y, z := f.user(t, "owner"), f.user(t, "x"), f.user(t, "y"), f.user(t, "z")
	post := createPost(t, a.url, owner, "like me")
	like := `mutation($p: ID!) { likePost(postId: $p) { id } }`

	sub := subscribeNotes(t, b.url, owner.token, "")
	f.waitChannel(t, f.keys.LiveNotes(owner.id))
	must(t, gatewaytest.Post(t, a.url, x.token, like, map[string]any{"p": post}))
	first := sub.expect(t, "", "LIKE 1 "+x.name)
	must(t, gatewaytest.Post(t, a.url, y.token, like, map[string]any{"p": post}))
	second := sub.expect(t, first, "LIKE 2 "+y.name+","+x.name)

	warmUp := createPost(t, b.url, x, "warm-up")
	f.srv.Kill()
	if err := f.srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// Redis restarted with no scripts loaded: a request's pipeline gets
	// NOSCRIPT, loads them and runs again, and a like's note job, queued
	// in that pipeline, is then queued twice. Two workers running both
	// copies at once can take the actor out and put them back, raising the
	// notification twice. A first like elsewhere loads the scripts, so
	// that this test sees the delivery, not that duplication.
	until(t, a.url, owner, like, map[string]any{"p": warmUp})
	until(t, a.url, z, like, map[string]any{"p": post})
	third := sub.expect(t, second, "LIKE 3 "+z.name+","+y.name+","+x.name)

	// Resumed on the other gateway from the first event: the notification
	// as it is now, once.
	resumed := subscribeNotes(t, a.url, owner.token, first)
	if id := resumed.expect(t, "", "LIKE 3 "+z.name+","+y.name+","+x.name); id != third {
		t.Fatalf("resumed event id %s, want %s", id, third)
	}
	// A stream subscribes before it reads what it replays: both listen.
	follow(t, b.url, x, owner)
	sub.expect(t, third, "FOLLOW 1 "+x.name)
	resumed.expect(t, third, "FOLLOW 1 "+x.name)
	sub.quiet(t)
	resumed.quiet(t)
}
