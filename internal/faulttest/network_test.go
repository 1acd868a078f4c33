package faulttest_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/faulttest"
	"github.com/socialgw/gateway/internal/redisproc"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/social"
)

// prefix is the key prefix of every process in these tests.
const prefix = "ft:"

// newRedis starts a redis-server of the test's own (it is stopped, killed
// and restarted, so it cannot be the package's shared one). persist turns
// the append-only file on, fsynced every second.
func newRedis(t *testing.T, persist bool) *redisproc.Server {
	t.Helper()
	var extra []string
	if persist {
		extra = []string{"--appendonly", "yes", "--appendfsync", "everysec"}
	}
	srv, err := redisproc.Start(extra...)
	if err == redisproc.ErrNotFound && os.Getenv("REQUIRE_REDIS") == "" {
		t.Skip("redis-server is not on PATH")
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
}

// users makes accounts straight through the store and starts a session for
// each, signed with the processes' secret: argon2id for hundreds of users
// would be the slowest part of the tests. follow[i] lists whom user i
// follows (indexes).
type users struct {
	store  *redisstore.Store
	rdb    redis.UniversalClient
	ids    []string
	tokens []string
}

var userSeq atomic.Int64

func makeUsers(t *testing.T, addr string, n int) *users {
	t.Helper()
	rdb := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { _ = rdb.Close() })
	return makeUsersOn(t, rdb, n)
}

// makeUsersOn is makeUsers over any client (a cluster's).
func makeUsersOn(t *testing.T, rdb redis.UniversalClient, n int) *users {
	t.Helper()
	store := redisstore.New(rdb, prefix)
	tokens, err := auth.NewTokens(auth.TokenOptions{Method: "HS256", Secret: []byte(faulttest.Secret), Issuer: "socialgw", Audience: "socialgw-api", TTL: 15 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	svc := &auth.Service{Accounts: store, Sessions: store, Tokens: tokens, Passwords: auth.NewPasswords(1), RefreshTTL: time.Hour}
	u := &users{store: store, rdb: rdb}
	ctx := context.Background()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("u%d_%d", i, userSeq.Add(1))
		acc, err := store.CreateUser(ctx, social.NewAccount{Name: name, Email: name + "@example.com", PasswordHash: "x"})
		if err != nil {
			t.Fatal(err)
		}
		res, err := svc.StartSession(ctx, acc)
		if err != nil {
			t.Fatal(err)
		}
		u.ids = append(u.ids, acc.ID)
		u.tokens = append(u.tokens, res.AccessToken)
	}
	return u
}

// followAll makes every user but the first follow the first.
func (u *users) followAll(t *testing.T) {
	t.Helper()
	for _, id := range u.ids[1:] {
		if err := u.store.Follow(context.Background(), id, u.ids[0]); err != nil {
			t.Fatal(err)
		}
	}
}

// home returns the post ids in a user's home list, newest first.
func (u *users) home(t *testing.T, i int) []string {
	t.Helper()
	list, err := u.rdb.LRange(context.Background(), u.store.Keys().Home(u.ids[i]), 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	out := make([]string, len(list))
	for j, e := range list {
		out[j] = e[:indexByte(e, ':')]
	}
	return out
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return len(s)
}

// backlog is the number of fan-out jobs queued or pending.
func (u *users) backlog(t *testing.T) int64 {
	t.Helper()
	n, err := u.rdb.XLen(context.Background(), u.store.Keys().FanoutStream()).Result()
	if err != nil && err != redis.Nil {
		return -1
	}
	return n
}

const createPost = `mutation($c: String!) { createPost(input: {content: $c}) { id } }`

// post creates a post as user i through a gateway and returns its id
// ("" when the gateway did not acknowledge it).
func (u *users) post(baseURL string, i int, content string) string {
	r := faulttest.Query(baseURL, u.tokens[i], createPost, map[string]any{"c": content})
	if !r.OK() {
		return ""
	}
	p, _ := r.Data["createPost"].(map[string]any)
	id, _ := p["id"].(string)
	return id
}

// clients runs n concurrent clients until stop is closed: client c calls
// f(c, i) for i = 0, 1, 2, … The returned wait waits for them to return.
func clients(n int, stop <-chan struct{}, f func(c, i int)) (wait func()) {
	var wg sync.WaitGroup
	for c := range n {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				f(c, i)
			}
		})
	}
	return wg.Wait
}

// env is the environment of processes on srv.
func env(srv *redisproc.Server, extra ...string) faulttest.Env {
	e := faulttest.Env{"REDIS_URL": srv.URL(), "REDIS_PREFIX": prefix, "FANOUT_MODE": "push"}
	for i := 0; i+1 < len(extra); i += 2 {
		e[extra[i]] = extra[i+1]
	}
	return e
}

// count returns how many times each id occurs.
func count(ids []string) map[string]int {
	m := map[string]int{}
	for _, id := range ids {
		m[id]++
	}
	return m
}
