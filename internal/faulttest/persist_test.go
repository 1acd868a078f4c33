package faulttest_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/socialgw/gateway/internal/faulttest"
	"github.com/socialgw/gateway/internal/redistest"
)

// TestPersistence: with appendonly yes and appendfsync everysec, Redis is
// SIGKILLed and started again. Every account, session, post, follow, like
// and comment acknowledged more than a second before the kill is there, and
// the same gateway serves them without a restart.
func TestPersistence(t *testing.T) {
	srv := newRedis(t, true)
	gw := faulttest.StartGateway(t, "gateway", env(srv))
	reg := faulttest.MustQuery(t, gw.URL, "", `mutation { register(input: {name: "durable", email: "durable@example.com", password: "correct horse battery"}) { accessToken user { id } } }`, nil)
	token := reg.Data["register"].(map[string]any)["accessToken"].(string)
	u := makeUsers(t, srv.Addr, 3)
	faulttest.MustQuery(t, gw.URL, u.tokens[1], `mutation($u: ID!) { follow(userId: $u) { id } }`, map[string]any{"u": u.ids[0]})
	post := u.post(gw.URL, 0, "kept")
	faulttest.MustQuery(t, gw.URL, u.tokens[1], `mutation($p: ID!) { likePost(postId: $p) { id } }`, map[string]any{"p": post})
	faulttest.MustQuery(t, gw.URL, u.tokens[2], `mutation($p: ID!) { addComment(postId: $p, content: "still here") { id } }`, map[string]any{"p": post})

	time.Sleep(1500 * time.Millisecond) // everysec: acknowledged a second before the kill
	srv.Kill()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	redistest.Eventually(t, 5*time.Second, "the gateway serving again", func() bool {
		return faulttest.Query(gw.URL, token, `{ me { name } }`, nil).OK()
	})
	faulttest.MustQuery(t, gw.URL, "", `mutation { login(input: {login: "durable", password: "correct horse battery"}) { accessToken } }`, nil)
	r := faulttest.MustQuery(t, gw.URL, u.tokens[1], `query($p: ID!, $u: ID!) {
	  post(id: $p) { content likesCount comments(first: 5) { edges { node { content } } } }
	  user(id: $u) { followersCount }
	}`, map[string]any{"p": post, "u": u.ids[0]})
	got := fmt.Sprint(r.Data)
	for _, want := range []string{"content:kept", "likesCount:1", "content:still here", "followersCount:1"} {
		if !strings.Contains(got, want) {
			t.Errorf("after the restart %s lacks %q", got, want)
		}
	}
}

// TestSlowRedis puts a proxy in front of Redis that holds replies past the
// gateway's read timeout, on and off, while clients post, like, comment
// and follow. go-redis sends a command whose reply was slow again, so every
// write must be safe to send twice: afterwards no post, comment, like or
// follow exists twice and no id was handed out twice.
func TestSlowRedis(t *testing.T) {
	srv := newRedis(t, false)
	proxy := faulttest.NewProxy(t, srv.Addr)
	u := makeUsers(t, srv.Addr, 6)
	target := u.ids[0]
	e := env(srv)
	e["REDIS_URL"] = "redis://" + proxy.Addr + "?read_timeout=100ms&write_timeout=100ms&max_retries=3"
	gw := faulttest.StartGateway(t, "gateway", e)
	post := u.post(gw.URL, 0, "target")
	if post == "" {
		t.Fatal("createPost failed")
	}

	stop := make(chan struct{})
	go func() {
		rng := rand.New(rand.NewPCG(1, 2))
		for {
			select {
			case <-stop:
				proxy.SetDelay(0)
				return
			case <-time.After(time.Duration(50+rng.IntN(100)) * time.Millisecond):
			}
			if rng.IntN(3) == 0 {
				proxy.SetDelay(150 * time.Millisecond) // past the read timeout
			} else {
				proxy.SetDelay(0)
			}
		}
	}()
	var wg sync.WaitGroup
	var failed atomic.Int64
	end := time.Now().Add(3 * time.Second)
	for c := 1; c < len(u.ids); c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; time.Now().Before(end); n++ {
				var r faulttest.Result
				switch n % 4 {
				case 0:
					r = faulttest.Query(gw.URL, u.tokens[c], createPost, map[string]any{"c": fmt.Sprintf("p%d-%d", c, n)})
				case 1:
					r = faulttest.Query(gw.URL, u.tokens[c], `mutation($p: ID!) { likePost(postId: $p) { id } }`, map[string]any{"p": post})
				case 2:
					r = faulttest.Query(gw.URL, u.tokens[c], `mutation($p: ID!, $c: String!) { addComment(postId: $p, content: $c) { id } }`,
						map[string]any{"p": post, "c": fmt.Sprintf("c%d-%d", c, n)})
				case 3:
					r = faulttest.Query(gw.URL, u.tokens[c], `mutation($u: ID!) { follow(userId: $u) { id } }`, map[string]any{"u": target})
				}
				if !r.OK() {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	dialed := proxy.Accepted()

	ctx := context.Background()
	k := u.store.Keys()
	seenPost := map[string]bool{}
	for c := range u.ids {
		ids := u.rdb.ZRange(ctx, k.UserPosts(u.ids[c]), 0, -1).Val()
		contents := map[string]int{}
		for _, id := range ids {
			if seenPost[id] {
				t.Errorf("post id %s handed out twice", id)
			}
			seenPost[id] = true
			contents[u.rdb.HGet(ctx, k.Post(id), "content").Val()]++
		}
		for content, n := range contents {
			if n > 1 {
				t.Errorf("user %d has %d posts %q", c, n, content)
			}
		}
	}
	cids := u.rdb.LRange(ctx, k.PostComments(post), 0, -1).Val()
	byContent := map[string]int{}
	for _, id := range count(cids) {
		if id > 1 {
			t.Errorf("a comment id is listed %d times", id)
		}
	}
	for _, id := range cids {
		byContent[u.rdb.HGet(ctx, k.PostComment(post, id), "content").Val()]++
	}
	for content, n := range byContent {
		if n > 1 {
			t.Errorf("comment %q stored %d times", content, n)
		}
	}
	if n := u.rdb.ZCard(ctx, k.Likers(post)).Val(); n > int64(len(u.ids)-1) {
		t.Errorf("%d likes from %d users", n, len(u.ids)-1)
	}
	if n := u.rdb.ZCard(ctx, k.Followers(target)).Val(); n > int64(len(u.ids)-1) {
		t.Errorf("%d followers from %d users", n, len(u.ids)-1)
	}
	t.Logf("written through the slow proxy: %d posts, %d comments, %d likes, %d follows; %d requests failed; the gateway dialed Redis %d times (a reply that timed out costs its connection)",
		len(seenPost), len(cids), u.rdb.ZCard(ctx, k.Likers(post)).Val(), u.rdb.ZCard(ctx, k.Followers(target)).Val(), failed.Load(), dialed)
	if dialed < 20 {
		t.Errorf("the gateway dialed Redis only %d times: no reply timed out, the test tested nothing", dialed)
	}
	if len(seenPost) < 5 {
		t.Error("almost nothing was written: the proxy made every request fail, the test tested nothing")
	}
}
