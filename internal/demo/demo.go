// Package demo fills an empty Redis with a small, believable social
// network, so that a developer who starts the gateway with --demo finds
// timelines, likes and comments to explore at once.
//
// The data goes through the same write paths as real traffic: the
// network of a few hundred people is internal/seed's plan (power-law
// follows, posts with reposts and audience-restricted posts, likes and
// comments) written with the store's methods and delivered by the real
// fan-out worker; the two demo users, alice and bob, register through the
// auth service and follow, post and comment like any client would. Their
// sessions are returned ready to use.
package demo

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/socialgw/gateway/internal/auth"
	"github.com/socialgw/gateway/internal/readplan"
	"github.com/socialgw/gateway/internal/redisstore"
	"github.com/socialgw/gateway/internal/seed"
	"github.com/socialgw/gateway/internal/social"
)

// Password is the password of every demo user.
const Password = "demo password"

// DefaultCelebrityThreshold is the celebrity threshold the demo is made
// for: its most followed author has more followers than this, and so is
// pulled at read time in hybrid mode, while everyone else is pushed.
const DefaultCelebrityThreshold = 75

// Size of the network around alice and bob: with 200 people the most
// followed has 100 followers (seed's power law gives the top half of the
// users), the next about 60. It is small enough to load in about a second
// into a real Redis and in two into the embedded one.
const (
	users = 200
	posts = 600
)

// Session is a demo user's ready-to-use login.
type Session struct {
	Name, Password string
	UserID         string
	AccessToken    string
	ExpiresAt      time.Time
	RefreshToken   string
	// Headers is the line to paste into GraphiQL's Headers tab.
	Headers string
}

// Result is what Load built.
type Result struct {
	// Alice follows many people, the celebrity among them; Bob follows
	// Alice and a few others.
	Alice, Bob Session
	// Celebrity is the name of the most followed author, and Followers
	// their follower count.
	Celebrity string
	Followers int
	// Stats count the network's writes (without the demo users' own);
	// Reposts are those of the celebrity's latest post.
	Stats    seed.Stats
	Reposts  int
	Duration time.Duration
}

// ErrNotEmpty says the database already holds data: the demo writes only
// into an empty one, so that it never mixes demo users (with a published
// password) into real data.
var ErrNotEmpty = errors.New("demo: the Redis database is not empty; demo data is written only into an empty database")

// Load writes the demo network into store's database, which must be
// empty (ErrNotEmpty otherwise), and returns alice's and bob's sessions.
// accounts must be the auth service over the same store. Load drains the
// fan-out queue itself, so it needs no running worker; it returns when
// every post is delivered.
//
// In hybrid mode the store's celebrity threshold must be below the most
// followed author's follower count (DefaultCelebrityThreshold is), or
// nobody is a celebrity and Load fails, since the demo would not show
// what it promises.
func Load(ctx context.Context, store *redisstore.Store, accounts *auth.Service) (*Result, error) {
	start := time.Now()
	n, err := store.DBSize(ctx)
	if err != nil {
		return nil, fmt.Errorf("demo: check the database is empty: %w", err)
	}
	if n > 0 {
		return nil, fmt.Errorf("%w (%d keys)", ErrNotEmpty, n)
	}
	cfg := seed.Config{
		Users: users, Posts: posts, Seed: 2026, Concurrency: 8,
		Password: Password, Name: name, Text: text,
	}
	// The plan says who will be most followed: check the threshold before
	// anything is written.
	followers := make([]int, users)
	for _, f := range seed.NewPlan(cfg).Follows {
		followers[f[1]]++
	}
	top := 0
	for u, f := range followers {
		if f > followers[top] {
			top = u
		}
	}
	if feed := store.Feed(); feed.Mode == redisstore.Hybrid && feed.CelebrityThreshold >= followers[top] {
		return nil, fmt.Errorf("demo: CELEBRITY_THRESHOLD is %d, but the demo's most followed author has %d followers: set it below that (the demo's default is %d)",
			feed.CelebrityThreshold, followers[top], DefaultCelebrityThreshold)
	}
	d, err := seed.Run(ctx, store, cfg)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	res := &Result{Celebrity: name(top), Followers: d.Followers[top], Stats: d.Stats}
	if err := people(ctx, store, accounts, d, top, res); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	res.Duration = time.Since(start)
	return res, nil
}

// people registers alice and bob and gives them a life: follows, posts
// (one of alice's only for bob, one of bob's hidden from alice, one of a
// friend's only for alice), likes, comments, reposts, and a few followers.
func people(ctx context.Context, store *redisstore.Store, accounts *auth.Service, d *seed.Data, celebrity int, res *Result) error {
	var err error
	if res.Alice, err = register(ctx, accounts, "alice"); err != nil {
		return err
	}
	if res.Bob, err = register(ctx, accounts, "bob"); err != nil {
		return err
	}
	alice, bob := res.Alice.UserID, res.Bob.UserID
	aliceFollows, err := follows(ctx, store, d, celebrity, alice, bob)
	if err != nil {
		return err
	}
	// A first read: in hybrid mode, fan-out skips users who never read.
	for _, id := range []string{alice, bob} {
		if _, err := store.HomePage(ctx, id, social.PageRequest{First: 1}, readplan.PageWants{}); err != nil {
			return fmt.Errorf("first read: %w", err)
		}
	}
	// ONLY_TO reaches followers only.
	if err := ownPosts(ctx, store, alice, bob, d.UserIDs[aliceFollows[1]]); err != nil {
		return err
	}
	if res.Reposts, err = news(ctx, store, d, celebrity, alice, aliceFollows[2:6]); err != nil {
		return err
	}
	return seed.Deliver(ctx, store)
}

// follows makes alice follow the celebrity and 40 others spread over the
// network (their recent posts are copied into her home timeline), bob 15
// and alice, and a dozen people follow each of them back. It returns the
// plan indexes alice follows, the celebrity first.
func follows(ctx context.Context, store *redisstore.Store, d *seed.Data, celebrity int, alice, bob string) ([]int, error) {
	follow := func(follower, followee string) error {
		if err := store.Follow(ctx, follower, followee); err != nil {
			return fmt.Errorf("follow: %w", err)
		}
		return nil
	}
	aliceFollows := []int{celebrity}
	for i := 1; len(aliceFollows) < 41; i += 4 {
		if i != celebrity {
			aliceFollows = append(aliceFollows, i)
		}
	}
	for _, u := range aliceFollows {
		if err := follow(alice, d.UserIDs[u]); err != nil {
			return nil, err
		}
	}
	for i := 3; i < 3+15*11; i += 11 {
		if err := follow(bob, d.UserIDs[i]); err != nil {
			return nil, err
		}
	}
	for _, pair := range [][2]string{{bob, alice}, {alice, bob}} {
		if err := follow(pair[0], pair[1]); err != nil {
			return nil, err
		}
	}
	for i := 5; i < 5+12*13; i += 13 {
		if err := follow(d.UserIDs[i], alice); err != nil {
			return nil, err
		}
		if err := follow(d.UserIDs[i+1], bob); err != nil {
			return nil, err
		}
	}
	return aliceFollows, nil
}

// ownPosts writes alice's, bob's and a friend's posts, oldest first; bob
// likes and comments on alice's public ones. Fan-out jobs are queued;
// seed.Deliver runs them.
func ownPosts(ctx context.Context, store *redisstore.Store, alice, bob, friend string) error {
	type post struct {
		author string
		in     social.NewPost
	}
	for _, p := range []post{
		{alice, social.NewPost{Content: "Hello! Trying out this new network. Who else is here?"}},
		{bob, social.NewPost{Content: "First post. Mostly here for the bread photos 🍞"}},
		{alice, social.NewPost{Content: "Bob, surprise party for Maya on Friday, 8pm at mine. Don't tell anyone!", OnlyTo: []string{bob}}},
		{bob, social.NewPost{Content: "Planning a gift for Alice's birthday, ideas welcome (not you, Alice).", NotTo: []string{alice}}},
		{alice, social.NewPost{Content: "Sunday hike to the hills: 14 km, one very muddy dog. Worth it."}},
		{friend, social.NewPost{Content: "Alice, the book you asked about is Tom Standage's. Just between us.", OnlyTo: []string{alice}}},
	} {
		created, err := store.CreatePost(ctx, p.author, p.in)
		if err != nil {
			return fmt.Errorf("create post: %w", err)
		}
		if p.author == alice && p.in.OnlyTo == nil {
			if err := store.Like(ctx, bob, created.ID); err != nil {
				return fmt.Errorf("like: %w", err)
			}
			if _, err := store.AddComment(ctx, bob, created.ID, "Welcome! Glad you're here."); err != nil {
				return fmt.Errorf("comment: %w", err)
			}
		}
	}
	return nil
}

// news writes the celebrity's news of the day: in hybrid mode these posts
// are not fanned out, and reach their followers' home timelines when they
// read. Alice likes and comments on the last; reposters (people she
// follows) repost it. It returns the number of reposts.
func news(ctx context.Context, store *redisstore.Store, d *seed.Data, celebrity int, alice string, reposters []int) (int, error) {
	var last *social.Post
	var err error
	for _, c := range []string{
		"Good morning! Three things worth reading today, thread below.",
		"Our city's new river park opens this weekend: free concerts on Saturday.",
		"Big news: the night trains are back from next month. Who's planning a trip?",
	} {
		if last, err = store.CreatePost(ctx, d.UserIDs[celebrity], social.NewPost{Content: c}); err != nil {
			return 0, fmt.Errorf("create post: %w", err)
		}
	}
	if err := store.Like(ctx, alice, last.ID); err != nil {
		return 0, fmt.Errorf("like: %w", err)
	}
	if _, err := store.AddComment(ctx, alice, last.ID, "Finally! Booking one for the summer."); err != nil {
		return 0, fmt.Errorf("comment: %w", err)
	}
	reposts := 0
	for i, u := range reposters {
		// Two plain reposts (alice's home page shows the news once, at
		// the newest of them) and two with a word of their own.
		in := social.NewPost{RepostOf: last.ID}
		if i >= 2 {
			in.Content = repostTemplates[i%len(repostTemplates)]
		}
		if _, err := store.CreatePost(ctx, d.UserIDs[u], in); err != nil {
			return reposts, fmt.Errorf("repost: %w", err)
		}
		reposts++
	}
	return reposts, nil
}

// register creates a demo user through the auth service, as the register
// mutation does, and returns their first session.
func register(ctx context.Context, accounts *auth.Service, name string) (Session, error) {
	r, err := accounts.Register(ctx, name, name+"@example.com", Password)
	if err != nil {
		return Session{}, fmt.Errorf("register %s: %w", name, err)
	}
	return Session{
		Name: name, Password: Password, UserID: r.User.ID,
		AccessToken: r.AccessToken, ExpiresAt: r.ExpiresAt, RefreshToken: r.RefreshToken,
		Headers: `{"Authorization": "Bearer ` + r.AccessToken + `"}`,
	}, nil
}
