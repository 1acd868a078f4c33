// Package seed builds a realistic data set through the store's own write
// APIs, so that the keys are laid out exactly as the gateway lays them out:
// users with power-law follower counts, posts with power-law author
// activity (some reposts, a few ONLY_TO and NOT_TO audiences), likes and
// comments with power-law counts per post, all decided in advance from a
// seed (NewPlan) and delivered to home timelines by the real fan-out
// worker. cmd/bench and the benchmarks use it.
package seed

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// Config says what to build.
type Config struct {
	Users, Posts int
	Seed         uint64
	// Concurrency is how many store calls run at once (default 16).
	Concurrency int
	// ActiveShare is the share of users whose home timeline is read once
	// before anyone posts (default 1: everyone). In hybrid mode fan-out
	// skips the others, whose timelines are rebuilt when they first read.
	ActiveShare float64
	// Password of every user (default "seed password"); it is hashed once.
	Password string
	// Log, when set, is told what each phase did.
	Log func(format string, args ...any) `json:"-"`
	// Name, when set, names the user of plan index i (default UserName);
	// names must be valid and distinct.
	Name func(i int) string `json:"-"`
	// Text, when set, writes the content of posts, reposts and comments
	// (default: random words), drawing only from rng so that the plan
	// stays the same for the same Config.
	Text func(rng *rand.Rand, kind TextKind) string `json:"-"`
}

// TextKind says what a text is for.
type TextKind int

// The texts a plan needs.
const (
	PostText    TextKind = iota // 20–200 characters
	RepostText                  // 5–60 characters
	CommentText                 // 5–120 characters
)

// Full is the data set of docs/performance.md.
func Full() Config { return Config{Users: 10000, Posts: 100000, Seed: 1} }

// Small is the data set of the go test benchmarks.
func Small() Config { return Config{Users: 500, Posts: 5000, Seed: 1} }

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = 16
	}
	if c.ActiveShare == 0 {
		c.ActiveShare = 1
	}
	if c.Password == "" {
		c.Password = "seed password"
	}
	if c.Log == nil {
		c.Log = func(string, ...any) {}
	}
	if c.Name == nil {
		c.Name = UserName
	}
	if c.Text == nil {
		c.Text = wordSalad
	}
	return c
}

// Data is what Run built: the plan's users and posts with their ids.
type Data struct {
	Config  Config   `json:"config"`
	UserIDs []string `json:"user_ids"` // by plan index
	// Following and Followers count each user's follows, by plan index.
	Following []int    `json:"following"`
	Followers []int    `json:"followers"`
	PostIDs   []string `json:"-"` // by plan index; "" when skipped
	Stats     Stats    `json:"stats"`
}

// Stats count what Run wrote and how long it took.
type Stats struct {
	Users, Follows, Posts, Reposts, OnlyTo, NotTo, Likes, Comments int
	// Skipped counts writes the store refused as the API would (a like of
	// a post hidden from the liker, …); the plan avoids them, so it is 0.
	Skipped    int
	FanoutJobs int64 // fan-out jobs the worker handled
	Phases     []Phase
	Total      time.Duration
}

// Phase is one step of Run and its duration.
type Phase struct {
	Name     string
	Duration time.Duration
}

// UserName is the name of the user of plan index i.
func UserName(i int) string { return "user" + strconv.Itoa(1000000 + i)[1:] }

func (d *Data) ids(us []int32) []string {
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = d.UserIDs[u]
	}
	return out
}

// Readers returns up to n plan indexes of users who follow at least
// minFollowing others, spread over all such users, the same ones for the
// same data.
func (d *Data) Readers(n, minFollowing int) []int {
	var all []int
	for u, f := range d.Following {
		if f >= minFollowing {
			all = append(all, u)
		}
	}
	rng := rand.New(rand.NewPCG(d.Config.Seed, 0x4ead))
	rng.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	all = all[:min(n, len(all))]
	slices.Sort(all)
	return all
}
