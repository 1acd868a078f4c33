package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/redistest"
	"github.com/socialgw/gateway/internal/social"
)

// dieAt is a client hook that makes the process "die" at one step of a
// multi-step write: the nth command whose arguments mention a key
// containing mark, and every command after it, fail without reaching
// Redis.
type dieAt struct {
	mark string
	n    int
	seen int
	dead bool
}

func (d *dieAt) DialHook(next redis.DialHook) redis.DialHook { return next }
func (d *dieAt) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
func (d *dieAt) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		for _, a := range cmd.Args() {
			if s, ok := a.(string); ok && strings.Contains(s, d.mark) {
				d.seen++
				if d.seen == d.n {
					d.dead = true
				}
				break
			}
		}
		if d.dead {
			err := errors.New("process died")
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

// TestRegistrationCrash kills a registration between its single-slot
// steps and checks what the others see: nothing half-made, the name taken
// only while the registration could still be running, then settled by the
// next registration that wants the name or the address.
func TestRegistrationCrash(t *testing.T) {
	cases := []struct {
		name string
		// The step the process dies at.
		mark string
		n    int
		// Whether the dead registration's account exists afterwards.
		exists bool
	}{
		{"after the claims", ":void", 1, false},
		{"after the profile", "{acct}:pending", 2, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			prefix := redistest.Prefix(t)
			now := time.Now()
			clock := func() time.Time { return now }
			healthy := redisstore.New(redistest.Client(t), prefix)
			healthy.SetClock(clock)
			// Loads the scripts, so each step is one command.
			if _, err := healthy.CreateUser(ctx, account("warm")); err != nil {
				t.Fatal(err)
			}
			rdb := redistest.Client(t)
			rdb.AddHook(&dieAt{mark: tc.mark, n: tc.n})
			dying := redisstore.New(rdb, prefix)
			dying.SetClock(clock)
			if _, err := dying.CreateUser(ctx, account("ann")); err == nil {
				t.Fatal("registration survived its process")
			}

			_, _, err := healthy.Credentials(ctx, "ann")
			if tc.exists && err != nil {
				t.Errorf("login after a crash past the profile: %v", err)
			}
			if !tc.exists && social.ErrorCode(err) != social.NotFound {
				t.Errorf("login of a half-registered account: %v, want NOT_FOUND", err)
			}
			// Within the grace period the name is taken: the registration
			// might still be running.
			if _, err := healthy.CreateUser(ctx, account("ann")); social.ErrorCode(err) != social.Conflict {
				t.Errorf("register the name again at once: %v, want CONFLICT", err)
			}
			now = now.Add(time.Minute)
			again := account("ann")
			again.Email = "other@example.com"
			u, err := healthy.CreateUser(ctx, again)
			if tc.exists {
				if social.ErrorCode(err) != social.Conflict {
					t.Errorf("register a finished account's name later: %v, want CONFLICT", err)
				}
			} else if err != nil {
				t.Fatalf("register an abandoned name later: %v", err)
			} else if id, _, err := healthy.Credentials(ctx, "ann"); err != nil || id != u.ID {
				t.Errorf("login as the new owner: %s, %v; want %s", id, err, u.ID)
			}
			// The abandoned registration's e-mail claim is released too, or
			// kept with its account.
			_, err = healthy.CreateUser(ctx, auth.NewAccount{Name: "bob", Email: "ann@example.com", PasswordHash: "x"})
			if tc.exists != (social.ErrorCode(err) == social.Conflict) {
				t.Errorf("register the dead registration's e-mail: %v", err)
			}
			if n := healthy.Client().HLen(ctx, healthy.Keys().RegPending()).Val(); n != 0 {
				t.Errorf("%d registrations still pending", n)
			}
		})
	}
}

func account(name string) auth.NewAccount {
	return auth.NewAccount{Name: name, Email: fmt.Sprint(name, "@example.com"), PasswordHash: "x"}
}

// TestGraphEditCrash kills graph edits between their single-slot steps
// and checks that the actor's next edit, once the grace period is over,
// finishes them on both sides, and that meanwhile another edit of the same
// pair waits instead of racing the dead one.
func TestGraphEditCrash(t *testing.T) {
	cases := []struct {
		name string
		edit func(s *redisstore.Store, ctx context.Context, a, b string) error
		n    int // the step the process dies at: 2 = the other side, 3 = the end
		// Whether a follows b once everything is finished.
		follows bool
	}{
		{"follow, before the other side", (*redisstore.Store).Follow, 2, true},
		{"follow, before the end", (*redisstore.Store).Follow, 3, true},
		{"block, before the other side", (*redisstore.Store).Block, 2, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			now := time.Now()
			clock := func() time.Time { return now }
			prefix := redistest.Prefix(t)
			healthy := redisstore.New(redistest.Client(t), prefix)
			healthy.SetClock(clock)
			ids := graphUsers(t, healthy, 3)
			a, b, c := ids[0], ids[1], ids[2]
			if tc.follows {
				// Loads the scripts on every master, so each step is one
				// command.
				if err := healthy.Follow(ctx, b, a); err != nil {
					t.Fatal(err)
				}
			} else if err := healthy.Follow(ctx, a, b); err != nil {
				t.Fatal(err)
			}
			rdb := redistest.Client(t)
			rdb.AddHook(&dieAt{mark: ":pending", n: tc.n})
			dying := redisstore.New(rdb, prefix)
			dying.SetClock(clock)
			if err := tc.edit(dying, ctx, a, b); err == nil {
				t.Fatal("edit survived its process")
			}
			// Another edit of the pair waits for the dead one, then gives up.
			if err := healthy.Unfollow(ctx, a, b); err == nil {
				t.Error("an edit of the pair ran while the dead one looked alive")
			}
			now = now.Add(time.Minute)
			if err := healthy.Follow(ctx, a, c); err != nil {
				t.Fatal(err)
			}
			following, _ := healthy.Following(ctx, a, a, social.PageRequest{First: 10})
			followers, _ := healthy.Followers(ctx, b, b, social.PageRequest{First: 10})
			if got := slices.Contains(following.Items, b); got != tc.follows {
				t.Errorf("a follows b: %v, want %v", got, tc.follows)
			}
			if got := slices.Contains(followers.Items, a); got != tc.follows {
				t.Errorf("b's followers hold a: %v, want %v", got, tc.follows)
			}
			if n := healthy.Client().HLen(ctx, healthy.Keys().GraphPending(a)).Val(); n != 0 {
				t.Errorf("%d edits of a still pending", n)
			}
		})
	}
}

// TestSweepPending leaves a registration and a follow abandoned between
// their steps by actors who never come back, and checks that the sweep
// leaves them alone while they may still run, then finishes both.
func TestSweepPending(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	clock := func() time.Time { return now }
	prefix := redistest.Prefix(t)
	healthy := redisstore.New(redistest.Client(t), prefix)
	healthy.SetClock(clock)
	ids := graphUsers(t, healthy, 3)
	a, b := ids[0], ids[1]
	// Loads the scripts on every master, so each step is one command.
	if err := healthy.Follow(ctx, ids[2], a); err != nil {
		t.Fatal(err)
	}
	if err := healthy.Follow(ctx, ids[2], b); err != nil {
		t.Fatal(err)
	}

	rdb := redistest.Client(t)
	rdb.AddHook(&dieAt{mark: ":pending", n: 2}) // the follow, before b's side
	dying := redisstore.New(rdb, prefix)
	dying.SetClock(clock)
	if err := dying.Follow(ctx, a, b); err == nil {
		t.Fatal("follow survived its process")
	}
	rdb2 := redistest.Client(t)
	rdb2.AddHook(&dieAt{mark: ":void", n: 1}) // the registration, after its claims
	dying2 := redisstore.New(rdb2, prefix)
	dying2.SetClock(clock)
	if _, err := dying2.CreateUser(ctx, account("gone")); err == nil {
		t.Fatal("registration survived its process")
	}

	if n, err := healthy.SweepPending(ctx); err != nil || n != 0 {
		t.Errorf("sweep within the grace period: %d finished, %v; want none", n, err)
	}
	now = now.Add(time.Minute)
	if n, err := healthy.SweepPending(ctx); err != nil || n != 2 {
		t.Errorf("sweep after the grace period: %d finished, %v; want 2", n, err)
	}
	followers, err := healthy.Followers(ctx, b, b, social.PageRequest{First: 10})
	if err != nil || !slices.Contains(followers.Items, a) {
		t.Errorf("b's followers %v, %v: want the swept follow of %s", followers.Items, err, a)
	}
	if _, err := healthy.UserIDByName(ctx, "gone"); social.ErrorCode(err) != social.NotFound {
		t.Errorf("the abandoned registration's name: %v, want released (NOT_FOUND)", err)
	}
	c := healthy.Client()
	if n := c.HLen(ctx, healthy.Keys().GraphPending(a)).Val() + c.HLen(ctx, healthy.Keys().RegPending()).Val(); n != 0 {
		t.Errorf("%d entries still pending", n)
	}
	// The index empties once its users have nothing pending; the re-run
	// follow re-indexed a, so a second sweep clears it.
	now = now.Add(time.Minute)
	if _, err := healthy.SweepPending(ctx); err != nil {
		t.Fatal(err)
	}
	if n := c.ZCard(ctx, healthy.Keys().GraphPendingIndex()).Val(); n != 0 {
		t.Errorf("%d users still in the pending index", n)
	}
}
