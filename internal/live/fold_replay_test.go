package live_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/live"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// TestStreamReplayFolds: a resumed stream replays what it missed through
// the home timeline's pages, which fold a post and its plain reposts
// into the newest of them over pages too. B posts X and then more than a
// replay page holds, and A reposts X: the replay sends A's repost, last,
// and not X, which sits on a later page of the replay's read.
func TestStreamReplayFolds(t *testing.T) {
	h, rdb := newHub(t, live.HubConfig{Buffer: 256})
	s := redisstore.New(rdb, redistest.Prefix(t))
	w, err := fanout.New(rdb, fanout.Config{Stream: s.Keys().FanoutStream(), Dead: s.Keys().FanoutDead(),
		Consumer: "test", MinIdle: time.Minute}, s.HandleFanoutJob, nil)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var u []string
	for i := range 3 {
		name := fmt.Sprint("fold", i)
		a, err := s.CreateUser(ctx, social.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: "x"})
		if err != nil {
			t.Fatal(err)
		}
		u = append(u, a.ID)
	}
	reader, a, b := u[0], u[1], u[2]
	post := func(author string, in social.NewPost) string {
		t.Helper()
		p, err := s.CreatePost(ctx, author, in)
		if err != nil {
			t.Fatal(err)
		}
		return p.ID
	}
	for _, f := range []string{a, b} {
		if err := s.Follow(ctx, reader, f); err != nil {
			t.Fatal(err)
		}
	}
	since := post(reader, social.NewPost{Content: "seen"})
	x := post(b, social.NewPost{Content: "x"})
	var want []string
	for i := range social.MaxFirst + 5 {
		want = append(want, post(b, social.NewPost{Content: fmt.Sprint(i)}))
	}
	want = append(want, post(a, social.NewPost{RepostOf: x}))
	if _, err := w.Drain(ctx); err != nil {
		t.Fatal(err)
	}

	tl := &live.Timelines{Hub: h, Store: s, Sessions: noRevocation{}}
	sctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	posts, end, err := tl.Stream(sctx, social.Viewer{UserID: reader}, since)
	if err != nil {
		t.Fatal(err)
	}
	if got := next(t, posts, end, len(want)); !slices.Equal(got, want) {
		t.Fatalf("replay %v,\nwant %v (X = %s folded into A's repost)", got, want, x)
	}
}
