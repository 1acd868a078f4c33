package redisstore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// FeedMode chooses how posts reach home timelines (docs/fanout.md).
type FeedMode string

// The fan-out modes.
const (
	// Push fans every post out to the home list of every allowed follower.
	Push FeedMode = "push"
	// Pull fans nothing out: a reader's home list is filled from the users
	// they follow when they read it.
	Pull FeedMode = "pull"
	// Hybrid pushes, except for authors with more followers than the
	// celebrity threshold (pulled at read time) and for followers inactive
	// for longer than InactiveAfter (rebuilt when they come back).
	Hybrid FeedMode = "hybrid"
)

// FeedConfig tunes timelines and fan-out. The gateway and the worker must
// run with the same values.
type FeedConfig struct {
	Mode FeedMode
	// CelebrityThreshold: in hybrid mode an author with more followers than
	// this is not fanned out.
	CelebrityThreshold int
	// InactiveAfter: in hybrid mode a follower whose last home-timeline
	// read is older than this is skipped by fan-out and rebuilt on return.
	InactiveAfter time.Duration
	// HomeCap is the most entries a home list keeps.
	HomeCap int
	// Backfill is how many of a followee's recent posts a follow copies.
	Backfill int
	// FanoutBatch is how many followers fan-out reads at a time, and how
	// many timelines one delivery script call writes (a call holds Redis
	// for a few ms at the default).
	FanoutBatch int
	// FanoutShards is how many streams the fan-out queue is sharded over
	// (each in its own hash slot); a post's jobs go to shard id mod
	// FanoutShards, so its publish and delete jobs stay in order. Zero
	// means DefaultFanoutShards.
	FanoutShards int
	// NoteWindow is how long an aggregated notification (likes or reposts
	// of one post, follows) takes new actors; later ones open a new one.
	// Zero means DefaultNoteWindow.
	NoteWindow time.Duration
	// NoteCap is the most notifications a user keeps (the least recently
	// active go first). Zero means DefaultNoteCap.
	NoteCap int
}

// Defaults of FeedConfig.
const (
	DefaultCelebrityThreshold = 10000
	DefaultInactiveAfter      = 7 * 24 * time.Hour
	DefaultHomeCap            = 800
	DefaultBackfill           = 200
	DefaultFanoutBatch        = 1000
	DefaultFanoutShards       = 1
	DefaultNoteWindow         = 24 * time.Hour
	DefaultNoteCap            = 200
	// MaxNoteCap bounds the notifications a user keeps: a page script
	// and a trim walk them in the user's slot.
	MaxNoteCap = 10000
	// MaxFanoutShards bounds the streams every worker process reads.
	MaxFanoutShards = 256
)

// DefaultFeed returns the default configuration: hybrid mode.
func DefaultFeed() FeedConfig {
	return FeedConfig{
		Mode: Hybrid, CelebrityThreshold: DefaultCelebrityThreshold, InactiveAfter: DefaultInactiveAfter,
		HomeCap: DefaultHomeCap, Backfill: DefaultBackfill, FanoutBatch: DefaultFanoutBatch,
		FanoutShards: DefaultFanoutShards,
	}
}

// Validate checks the configuration.
func (c FeedConfig) Validate() error {
	switch {
	case c.Mode != Push && c.Mode != Pull && c.Mode != Hybrid:
		return fmt.Errorf("fan-out mode %q: want push, pull or hybrid", c.Mode)
	case c.CelebrityThreshold < 0:
		return fmt.Errorf("celebrity threshold must not be negative")
	case c.InactiveAfter <= 0:
		return fmt.Errorf("inactivity period must be positive")
	case c.HomeCap < 1:
		return fmt.Errorf("home timeline cap must be at least 1")
	case c.Backfill < 0:
		return fmt.Errorf("follow backfill must not be negative")
	case c.FanoutBatch < 1:
		return fmt.Errorf("fan-out batch must be at least 1")
	case c.NoteWindow < 0 || c.NoteCap < 0:
		return fmt.Errorf("notification window and cap must not be negative")
	case c.NoteCap > MaxNoteCap:
		return fmt.Errorf("notification cap must be at most %d", MaxNoteCap)
	case c.FanoutShards < 0 || c.FanoutShards > MaxFanoutShards:
		return fmt.Errorf("fan-out shards must be between 1 and %d", MaxFanoutShards)
	}
	return nil
}

// SetFeed sets the timeline configuration; call it before serving.
func (s *DB) SetFeed(c FeedConfig) error {
	if err := c.Validate(); err != nil {
		return err
	}
	if c.FanoutShards == 0 {
		c.FanoutShards = DefaultFanoutShards
	}
	s.set.feed = c
	return nil
}

// Feed returns the timeline configuration.
func (s *DB) Feed() FeedConfig { return s.set.feed }

// ActiveEvery is how stale a reader's activity mark may get before a read
// writes it again: a write per hour at most, not per read. A live reader
// reads this often to stay active.
func (s *DB) ActiveEvery() time.Duration { return s.set.feed.activeEvery() }

func (c FeedConfig) activeEvery() time.Duration {
	return min(time.Hour, c.InactiveAfter/4)
}

// ClaimFeed records in Redis the settings of SetFeed that every gateway
// and worker of a deployment must share, or checks this process's against
// those recorded by the first to start: a gateway and a worker that
// disagree on the mode, the celebrity threshold or the cap would build and
// read timelines by different rules, each correctly by its own, and wrong
// together. A mismatch is an error naming each setting by its variable;
// reclaim records this process's settings instead (an intended change,
// with the other processes stopped).
func (s *DB) ClaimFeed(ctx context.Context, reclaim bool) error {
	c := s.set.feed
	args := []any{boolArg(reclaim),
		"FANOUT_MODE", string(c.Mode),
		"CELEBRITY_THRESHOLD", c.CelebrityThreshold,
		"INACTIVE_DAYS", days(c.InactiveAfter),
		"HOME_CAP", c.HomeCap,
		"FOLLOW_BACKFILL", c.Backfill,
		"FANOUT_SHARDS", max(c.FanoutShards, DefaultFanoutShards),
		"NOTIFY_WINDOW", c.noteWindow().String(),
		"NOTIFY_CAP", c.noteCap(),
	}
	diff, err := feedClaimScript.Run(ctx, s.rdb, []string{s.keys.FeedSettings()}, args...).StringSlice()
	if err != nil {
		return fmt.Errorf("record the timeline settings: %w", err)
	}
	if len(diff) == 0 {
		return nil
	}
	var msgs []string
	for i := 0; i+2 < len(diff); i += 3 {
		msgs = append(msgs, fmt.Sprintf("%s is %s in this deployment, %s here", diff[i], diff[i+1], diff[i+2]))
	}
	return fmt.Errorf("%w: %s; give every gateway and worker the same values, or, to change them, "+
		"stop the others and start one process with FEED_RECLAIM=true", ErrSettingsDiffer, strings.Join(msgs, "; "))
}

// ErrSettingsDiffer is ClaimFeed's error for settings that differ from
// the deployment's.
var ErrSettingsDiffer = errors.New("timeline settings differ from those the deployment's running processes use (recorded in Redis)")

// days writes d in days when it is whole days, else as a duration.
func days(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(d/(24*time.Hour)), 10)
	}
	return d.String()
}

func (c FeedConfig) noteWindow() time.Duration {
	if c.NoteWindow == 0 {
		return DefaultNoteWindow
	}
	return c.NoteWindow
}

func (c FeedConfig) noteCap() int {
	if c.NoteCap == 0 {
		return DefaultNoteCap
	}
	return c.NoteCap
}
