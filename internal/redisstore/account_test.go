package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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

// crashRig is a store on a fresh prefix with a clock the test moves, and
// the stores of processes that die at a chosen step on the same data.
type crashRig struct {
	mu      sync.Mutex
	now     time.Time
	prefix  string
	healthy *redisstore.Store
}

func newCrashRig(t *testing.T) *crashRig {
	r := &crashRig{now: time.Now(), prefix: redistest.Prefix(t)}
	r.healthy = redisstore.New(redistest.Client(t), r.prefix)
	r.healthy.SetClock(r.clock)
	return r
}

func (r *crashRig) clock() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.now
}

// advance moves the rig's clock by d.
func (r *crashRig) advance(d time.Duration) {
	r.mu.Lock()
	r.now = r.now.Add(d)
	r.mu.Unlock()
}

// whileWaiting runs f while moving the clock a second every few
// milliseconds, so that a wait measured on the store's clock ends at once;
// it returns f's error.
func (r *crashRig) whileWaiting(t *testing.T, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			return err
		case <-tick.C:
			r.advance(time.Second / 4)
		}
	}
}

// dying returns a store whose process dies at the nth command mentioning
// a key that contains mark.
func (r *crashRig) dying(t *testing.T, mark string, n int) *redisstore.Store {
	rdb := redistest.Client(t)
	rdb.AddHook(&dieAt{mark: mark, n: n})
	s := redisstore.New(rdb, r.prefix)
	s.SetClock(r.clock)
	return s
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
			r := newCrashRig(t)
			healthy := r.healthy
			// Loads the scripts, so each step is one command.
			if _, err := healthy.CreateUser(ctx, account("warm")); err != nil {
				t.Fatal(err)
			}
			if _, err := r.dying(t, tc.mark, tc.n).CreateUser(ctx, account("ann")); err == nil {
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
			r.advance(time.Minute)
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
			_, err = healthy.CreateUser(ctx, social.NewAccount{Name: "bob", Email: "ann@example.com", PasswordHash: "x"})
			if tc.exists != (social.ErrorCode(err) == social.Conflict) {
				t.Errorf("register the dead registration's e-mail: %v", err)
			}
			if n := healthy.Client().HLen(ctx, healthy.Keys().RegPending()).Val(); n != 0 {
				t.Errorf("%d registrations still pending", n)
			}
		})
	}
}

func account(name string) social.NewAccount {
	return social.NewAccount{Name: name, Email: fmt.Sprint(name, "@example.com"), PasswordHash: "x"}
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
			r := newCrashRig(t)
			healthy := r.healthy
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
			if err := tc.edit(r.dying(t, ":pending", tc.n), ctx, a, b); err == nil {
				t.Fatal("edit survived its process")
			}
			// Another edit of the pair waits for the dead one, then gives up:
			// the wait is on the store's clock, which moves meanwhile.
			if err := r.whileWaiting(t, func() error { return healthy.Unfollow(ctx, a, b) }); err == nil {
				t.Error("an edit of the pair ran while the dead one looked alive")
			}
			r.advance(time.Minute)
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

// TestMuteCrash kills mutes and unmutes between their sides (the actor's
// Mutes, then the target's MutedBy, which fan-out reads) and checks what
// is left meanwhile and that the actor's next edit finishes them: an
// unmute's hook then copies the author's posts back, which fan-out skipped
// while MutedBy still held the reader.
func TestMuteCrash(t *testing.T) {
	cases := []struct {
		name       string
		muted      bool // a muted b before the edit
		edit       func(s *redisstore.Store, ctx context.Context, a, b string) error
		halfMutes  bool // Mutes(a) holds b while the edit is half done
		halfMuted  bool // MutedBy(b) holds a while the edit is half done
		finalMuted bool
		// The actor's next edit is of the same pair (a follow, again):
		// it must finish the mute's edit, not take over its entry.
		samePair bool
	}{
		{"mute, before the other side", false, (*redisstore.Store).Mute, true, false, true, false},
		{"unmute, before the other side", true, (*redisstore.Store).Unmute, false, true, false, false},
		{"unmute, before the other side; then a follow of the pair", true, (*redisstore.Store).Unmute, false, true, false, true},
		{"mute, before the other side; then a follow of the pair", false, (*redisstore.Store).Mute, true, false, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := newCrashRig(t)
			healthy := r.healthy
			ids := graphUsers(t, healthy, 3)
			a, b, c := ids[0], ids[1], ids[2]
			k, rdb := healthy.Keys(), healthy.Client()
			if err := healthy.Follow(ctx, a, b); err != nil {
				t.Fatal(err)
			}
			if tc.muted {
				if err := healthy.Mute(ctx, a, b); err != nil {
					t.Fatal(err)
				}
			}
			post, err := healthy.CreatePost(ctx, b, social.NewPost{Content: "while half done"})
			if err != nil {
				t.Fatal(err)
			}
			if err := tc.edit(r.dying(t, ":pending", 2), ctx, a, b); err == nil {
				t.Fatal("edit survived its process")
			}
			half := func(key string, want bool) {
				t.Helper()
				member := a
				if key == k.Mutes(a) {
					member = b
				}
				if got := rdb.SIsMember(ctx, key, member).Val(); got != want {
					t.Errorf("%s holds %s: %v, want %v", key, member, got, want)
				}
			}
			half(k.Mutes(a), tc.halfMutes)
			half(k.MutedBy(b), tc.halfMuted)
			// The post's fan-out runs while the edit is half done.
			if err := healthy.HandleFanoutJob(ctx, map[string]string{"op": "post", "post": post.ID, "author": b}); err != nil {
				t.Fatal(err)
			}
			r.advance(time.Minute)
			next := c
			if tc.samePair {
				next = b
			}
			if err := healthy.Follow(ctx, a, next); err != nil {
				t.Fatal(err)
			}
			half(k.Mutes(a), tc.finalMuted)
			half(k.MutedBy(b), tc.finalMuted)
			inList := slices.Contains(rdb.LRange(ctx, k.Home(a), 0, -1).Val(), post.ID+":"+b)
			if inList == tc.finalMuted {
				t.Errorf("a's home list holds b's post: %v, want %v", inList, !tc.finalMuted)
			}
		})
	}
}

// TestSweepPending leaves a registration and a follow abandoned between
// their steps by actors who never come back, and checks that the sweep
// leaves them alone while they may still run, then finishes both.
func TestSweepPending(t *testing.T) {
	ctx := context.Background()
	r := newCrashRig(t)
	healthy := r.healthy
	ids := graphUsers(t, healthy, 3)
	a, b := ids[0], ids[1]
	// Loads the scripts on every master, so each step is one command.
	if err := healthy.Follow(ctx, ids[2], a); err != nil {
		t.Fatal(err)
	}
	if err := healthy.Follow(ctx, ids[2], b); err != nil {
		t.Fatal(err)
	}

	// The follow dies before b's side, the registration after its claims.
	if err := r.dying(t, ":pending", 2).Follow(ctx, a, b); err == nil {
		t.Fatal("follow survived its process")
	}
	if _, err := r.dying(t, ":void", 1).CreateUser(ctx, account("gone")); err == nil {
		t.Fatal("registration survived its process")
	}

	if n, err := healthy.SweepPending(ctx); err != nil || n != 0 {
		t.Errorf("sweep within the grace period: %d finished, %v; want none", n, err)
	}
	r.advance(time.Minute)
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
	r.advance(time.Minute)
	if _, err := healthy.SweepPending(ctx); err != nil {
		t.Fatal(err)
	}
	if n := c.ZCard(ctx, healthy.Keys().GraphPendingIndex()).Val(); n != 0 {
		t.Errorf("%d users still in the pending index", n)
	}
}
