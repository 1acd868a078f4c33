package faulttest_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/fanout"
	"github.com/socialgw/gateway/internal/faulttest"
	"github.com/socialgw/gateway/internal/redistest"
)

// TestWorkerKilledMidFanout: a worker is SIGKILLed while it fans posts out
// to 1 500 followers, a pipeline at a time. A second worker claims what the
// dead one held: every follower ends up with every post exactly once, and
// the dead worker's consumer leaves the group.
func TestWorkerKilledMidFanout(t *testing.T) {
	srv := newRedis(t, false)
	u := makeUsers(t, srv.Addr, 1501)
	u.followAll(t)
	gw := faulttest.StartGateway(t, "gateway", env(srv))
	var posts []string
	for i := 0; i < 8; i++ {
		id := u.post(gw.URL, 0, fmt.Sprint("post ", i))
		if id == "" {
			t.Fatal("createPost failed")
		}
		posts = append(posts, id)
	}
	slow := env(srv, "FANOUT_BATCH", "20", "FANOUT_CONCURRENCY", "2", "FANOUT_MIN_IDLE", "1s", "FANOUT_CONSUMER", "doomed")
	doomed := faulttest.StartWorker(t, "doomed worker", slow)
	redistest.Eventually(t, 20*time.Second, "the first deliveries", func() bool {
		return len(u.home(t, 1500)) > 0 || len(u.home(t, 750)) > 0 || len(u.home(t, 1)) > 0
	})
	doomed.Kill()
	if u.backlog(t) == 0 {
		t.Skip("the worker finished before it was killed: nothing to test on this machine")
	}
	faulttest.StartWorker(t, "survivor", env(srv, "FANOUT_MIN_IDLE", "1s", "FANOUT_CONSUMER", "survivor"))
	redistest.Eventually(t, 60*time.Second, "the backlog handled by the survivor", func() bool { return u.backlog(t) == 0 })
	for i := 1; i < len(u.ids); i++ {
		c := count(u.home(t, i))
		for _, p := range posts {
			if c[p] != 1 {
				t.Fatalf("follower %d has post %s %d times (home %v)", i, p, c[p], u.home(t, i))
			}
		}
	}
	redistest.Eventually(t, 15*time.Second, "the dead worker's consumer removed", func() bool {
		cs, err := u.rdb.XInfoConsumers(context.Background(), u.store.Keys().FanoutStream(), fanout.DefaultGroup).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range cs {
			if c.Name == "doomed" {
				return false
			}
		}
		return true
	})
}

// TestGatewayKilledMidWrites: a gateway is SIGKILLed while clients post,
// like and comment through it. Every write it acknowledged is there and
// fanned out; every post any timeline lists is whole (its hash exists);
// a new gateway serves it all.
func TestGatewayKilledMidWrites(t *testing.T) {
	srv := newRedis(t, false)
	u := makeUsers(t, srv.Addr, 8)
	u.followAll(t)
	// Home lists longer than the posts written, so every post stays in them.
	faulttest.StartWorker(t, "worker", env(srv, "FANOUT_MIN_IDLE", "1s", "HOME_CAP", "100000"))
	victim := faulttest.StartGateway(t, "victim", env(srv, "HOME_CAP", "100000"))
	target := u.post(victim.URL, 0, "the post everyone likes")
	if target == "" {
		t.Fatal("createPost failed")
	}

	var mu sync.Mutex
	acked := map[string]string{} // post id → content
	var likes, comments []string // user index:post, comment ids
	stop := make(chan struct{})
	wait := clients(8, stop, func(c, n int) {
		switch n % 3 {
		case 0:
			content := fmt.Sprintf("c%d-%d", c, n)
			if id := u.post(victim.URL, 0, content); id != "" {
				mu.Lock()
				acked[id] = content
				mu.Unlock()
			}
		case 1:
			r := faulttest.Query(victim.URL, u.tokens[c], `mutation($p: ID!) { likePost(postId: $p) { id } }`, map[string]any{"p": target})
			if r.OK() {
				mu.Lock()
				likes = append(likes, u.ids[c])
				mu.Unlock()
			}
		case 2:
			r := faulttest.Query(victim.URL, u.tokens[c], `mutation($p: ID!, $c: String!) { addComment(postId: $p, content: $c) { id } }`,
				map[string]any{"p": target, "c": fmt.Sprint("comment ", c, n)})
			if r.OK() {
				id, _ := r.Data["addComment"].(map[string]any)["id"].(string)
				mu.Lock()
				comments = append(comments, id)
				mu.Unlock()
			}
		}
	})
	time.Sleep(1500 * time.Millisecond)
	victim.Kill()
	close(stop)
	wait()
	if len(acked) == 0 {
		t.Fatal("no write was acknowledged before the kill")
	}
	t.Logf("acknowledged before the kill: %d posts, %d likes, %d comments", len(acked), len(likes), len(comments))

	gw := faulttest.StartGateway(t, "successor", env(srv, "HOME_CAP", "100000"))
	for id, content := range acked {
		r := faulttest.MustQuery(t, gw.URL, u.tokens[1], `query($id: ID!) { post(id: $id) { content } }`, map[string]any{"id": id})
		if got := fmt.Sprint(r.Data["post"]); !strings.Contains(got, content) {
			t.Errorf("acknowledged post %s: got %s, want content %q", id, got, content)
		}
	}
	r := faulttest.MustQuery(t, gw.URL, u.tokens[1], `query($id: ID!) { post(id: $id) { likesCount commentsCount } }`, map[string]any{"id": target})
	p := r.Data["post"].(map[string]any)
	if int(p["likesCount"].(float64)) < len(count(likes)) || int(p["commentsCount"].(float64)) < len(comments) {
		t.Errorf("post shows %v likes and %v comments; acknowledged %d likers and %d comments", p["likesCount"], p["commentsCount"], len(count(likes)), len(comments))
	}
	// Nothing half-written is listed: every post of the author's timeline
	// has its hash.
	ctx := context.Background()
	ids, err := u.rdb.ZRange(ctx, u.store.Keys().UserPosts(u.ids[0]), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if u.rdb.Exists(ctx, u.store.Keys().Post(id)).Val() != 1 {
			t.Errorf("post %s is listed in its author's timeline but has no hash", id)
		}
	}
	// Every acknowledged post reaches the followers.
	redistest.Eventually(t, 30*time.Second, "the acknowledged posts fanned out", func() bool {
		c := count(u.home(t, 7))
		for id := range acked {
			if c[id] != 1 {
				return false
			}
		}
		return true
	})
}
