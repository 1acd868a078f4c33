package demo_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/demo"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// db is a database number of the package's server no other test uses:
// the demo refuses a database that holds anything.
var db atomic.Int32

// emptyDB returns a client of a database of its own, emptied.
func emptyDB(t *testing.T) *redis.Client {
	t.Helper()
	n := int(db.Add(1))
	if n > 15 {
		t.Fatal("out of Redis databases")
	}
	rdb := redis.NewClient(&redis.Options{Addr: redistest.Addr(t), DB: n})
	t.Cleanup(func() { _ = rdb.Close() })
	if err := rdb.FlushDB(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	return rdb
}

func newServices(t *testing.T, rdb redis.UniversalClient, threshold int) (*redisstore.Store, *auth.Service) {
	t.Helper()
	store := redisstore.New(rdb, "sg:")
	err := store.SetFeed(redisstore.FeedConfig{
		Mode: redisstore.Hybrid, CelebrityThreshold: threshold, InactiveAfter: redisstore.DefaultInactiveAfter,
		HomeCap: redisstore.DefaultHomeCap, Backfill: redisstore.DefaultBackfill, FanoutBatch: redisstore.DefaultFanoutBatch,
	})
	if err != nil {
		t.Fatal(err)
	}
	tokens, err := auth.NewTokens(auth.TokenOptions{Method: "HS256", Secret: []byte(strings.Repeat("s", 32)),
		Issuer: "socialgw", Audience: "socialgw-api", TTL: 15 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	return store, &auth.Service{Accounts: store, Sessions: store, Tokens: tokens,
		Passwords: auth.NewPasswords(2), RefreshTTL: time.Hour}
}

func TestLoad(t *testing.T) {
	ctx := context.Background()
	store, accounts := newServices(t, emptyDB(t), demo.DefaultCelebrityThreshold)
	res, err := demo.Load(ctx, store, accounts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("demo: %v, %+v", res.Duration, res.Stats)
	if res.Stats.Users < 200 || res.Stats.Posts < 600 || res.Reposts == 0 || res.Stats.Likes == 0 ||
		res.Stats.Comments == 0 || res.Stats.OnlyTo == 0 || res.Stats.NotTo == 0 {
		t.Errorf("stats %+v: want a few hundred users and every kind of write", res.Stats)
	}
	if res.Followers <= demo.DefaultCelebrityThreshold {
		t.Errorf("the most followed author has %d followers, not above the threshold %d", res.Followers, demo.DefaultCelebrityThreshold)
	}

	// The sessions work, and the Headers line carries the access token.
	viewers := map[string]social.Viewer{}
	for _, s := range []demo.Session{res.Alice, res.Bob} {
		v, err := accounts.Authenticate(ctx, s.AccessToken)
		if err != nil || v.UserID != s.UserID {
			t.Fatalf("%s's access token: viewer %+v, %v", s.Name, v, err)
		}
		viewers[s.Name] = v
		if want := `{"Authorization": "Bearer ` + s.AccessToken + `"}`; s.Headers != want {
			t.Errorf("%s's Headers = %q, want %q", s.Name, s.Headers, want)
		}
		if _, err := accounts.Refresh(ctx, s.RefreshToken); err != nil {
			t.Errorf("%s's refresh token: %v", s.Name, err)
		}
		if _, err := accounts.Login(ctx, s.Name, demo.Password); err != nil {
			t.Errorf("log in as %s: %v", s.Name, err)
		}
	}

	// Alice's home timeline holds the posts of those she follows, the
	// celebrity's merged in at read time, and the post only for her; Bob's
	// post hidden from her is missing; Bob sees Alice's post only for him.
	alice := homeTimeline(t, store, res.Alice.UserID, 100)
	authors := map[string]int{}
	var onlyForAlice, hiddenFromAlice, repost bool
	for _, p := range alice {
		repost = repost || p.repost
		authors[p.author]++
		onlyForAlice = onlyForAlice || strings.Contains(p.content, "Just between us")
		hiddenFromAlice = hiddenFromAlice || strings.Contains(p.content, "not you, Alice")
	}
	if authors[res.Celebrity] == 0 {
		t.Errorf("alice's home timeline has no post by the celebrity %s: %v", res.Celebrity, authors)
	}
	if !repost {
		t.Error("alice's home timeline has no repost")
	}
	if len(authors) < 10 {
		t.Errorf("alice's home timeline has posts by only %d authors", len(authors))
	}
	if !onlyForAlice || hiddenFromAlice {
		t.Errorf("alice's home timeline: the post only for her shown %v, the post hidden from her shown %v", onlyForAlice, hiddenFromAlice)
	}
	var party bool
	for _, p := range homeTimeline(t, store, res.Bob.UserID, 100) {
		party = party || strings.Contains(p.content, "surprise party")
	}
	if !party {
		t.Error("bob's home timeline lacks alice's post only for him")
	}

	// A second load is refused: the database is not empty.
	if _, err := demo.Load(ctx, store, accounts); !errors.Is(err, demo.ErrNotEmpty) {
		t.Errorf("second Load: %v, want ErrNotEmpty", err)
	}
}

type post struct {
	author, content string
	repost          bool
}

// homeTimeline returns the first n posts of a home timeline with their
// authors' names.
func homeTimeline(t *testing.T, store *redisstore.Store, viewer string, n int) []post {
	t.Helper()
	page, err := store.HomePage(context.Background(), viewer, social.PageRequest{First: n}, readplan.PageWants{})
	if err != nil {
		t.Fatal(err)
	}
	var out []post
	for _, p := range page.Posts.Items {
		u, err := store.User(context.Background(), p.AuthorID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, post{u.Name, p.Content, p.RepostOfID != ""})
	}
	return out
}

func TestLoadRefuses(t *testing.T) {
	ctx := context.Background()
	t.Run("non-empty database", func(t *testing.T) {
		rdb := emptyDB(t)
		if err := rdb.Set(ctx, "someone-elses-key", "x", 0).Err(); err != nil {
			t.Fatal(err)
		}
		store, accounts := newServices(t, rdb, demo.DefaultCelebrityThreshold)
		if _, err := demo.Load(ctx, store, accounts); !errors.Is(err, demo.ErrNotEmpty) {
			t.Fatalf("Load = %v, want ErrNotEmpty", err)
		}
		if n := rdb.DBSize(ctx).Val(); n != 1 {
			t.Errorf("the database holds %d keys after the refusal, want 1", n)
		}
	})
	t.Run("threshold above the network", func(t *testing.T) {
		rdb := emptyDB(t)
		store, accounts := newServices(t, rdb, redisstore.DefaultCelebrityThreshold)
		_, err := demo.Load(ctx, store, accounts)
		if err == nil || !strings.Contains(err.Error(), "CELEBRITY_THRESHOLD") {
			t.Fatalf("Load = %v, want an error naming CELEBRITY_THRESHOLD", err)
		}
		if n := rdb.DBSize(ctx).Val(); n != 0 {
			t.Errorf("the refusal left %d keys", n)
		}
	})
}

// TestLoadEmbedded loads the demo into the embedded Redis that
// `go run ./cmd/gateway --demo` uses.
func TestLoadEmbedded(t *testing.T) {
	m := miniredis.RunT(t)
	rdb := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer rdb.Close()
	store, accounts := newServices(t, rdb, demo.DefaultCelebrityThreshold)
	store.UseClassicPubSub() // as the gateway does on the embedded Redis
	res, err := demo.Load(context.Background(), store, accounts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("demo on the embedded Redis: %v", res.Duration)
}
