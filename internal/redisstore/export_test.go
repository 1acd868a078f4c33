package redisstore

import (
	"context"
	"time"

	"github.com/socialgw/gateway/internal/social"
)

// LuaSource exposes the embedded scripts to the script tests.
var LuaSource = luaSource

// ScriptSources are the full sources of the store's scripts by file name.
var ScriptSources = scriptSources

// SetClock replaces the store's clock.
func (s *DB) SetClock(now func() time.Time) { s.set.now = now }

// AfterNewerRound runs fn after each read round of a newer home page.
func (s *DB) AfterNewerRound(fn func()) { s.set.newerRound = fn }

// DeliverAsOneBatch delivers post (by author, in push mode, no audience)
// to recipients in one deliver_batch.lua call, whatever servers hold them:
// on Redis Cluster a batch that straddles masters, as a stale slot map
// would send, which delivery must recover from.
func (s *FanoutService) DeliverAsOneBatch(ctx context.Context, post, author string, recipients []string) error {
	d := delivery{s: s, post: post, author: author, mustFollow: "0"}
	return d.sendBatches(ctx, [][]string{recipients})
}

// EachFollowers exposes the walk of a user's followers that fan-out makes.
func (s *FanoutService) EachFollowers(ctx context.Context, author string, fn func([]string) error) error {
	return s.eachFollowers(ctx, author, false, fn)
}

// Bounds of a common-following page, for the tests that check them.
const (
	CommonChunk   = commonChunk
	CommonWalkMax = commonWalkMax
	CommonSample  = commonSample
)

// NoteExcludedCap is how many of each of a recipient's block and mute sets
// a notification read lists.
const NoteExcludedCap = noteExcludedCap

// CheckedPost reads one post as viewerID may see it, with the counters
// its hash holds, through the visibility check that pages use.
func (s *PostService) CheckedPost(ctx context.Context, viewerID, id string) (*social.Post, social.PostCounts, error) {
	v := postReader{s.rdb, s.keys, s.set.posts, s.set.now}.newVisibility(viewerID, []string{id})
	if err := v.check(ctx); err != nil {
		return nil, social.PostCounts{}, err
	}
	c, _ := v.counts(0)
	return v.posts()[0], c, nil
}

// ScreenKeeps exposes screen's verdict on one post's fields.
var ScreenKeeps = screenKeeps

// SessionGenerations is how many rotated tokens a session remembers.
const SessionGenerations = sessionGenerations

// SetPostFields exposes the write of a post's mutable fields.
func (s *PostService) SetPostFields(ctx context.Context, id string, p *social.Post, fields ...string) error {
	return s.setPostFields(ctx, id, p, fields...)
}

// IndexTagUse indexes post (by author, PUBLIC, made at) under tag, as the
// fan-out job of a new post does: for the memory benchmark of trends.
func (s *DB) IndexTagUse(ctx context.Context, tag, post, author string, at time.Time) error {
	return newTagIndex(s.rdb, s.keys, s.set).index(ctx, taggedPost{id: post, author: author, vis: social.Public, created: at, tags: []string{tag}})
}

// SetMaxResolvedReports replaces the bound of resolved reports kept.
func SetMaxResolvedReports(n int) (restore func()) {
	old := maxResolvedReports
	maxResolvedReports = n
	return func() { maxResolvedReports = old }
}

// AfterPurgeBatch runs fn after each batch of an account's purge, with
// the stage's name (nil: nothing).
func (s *DB) AfterPurgeBatch(fn func(stage string)) { s.set.purgeBatch = fn }

// SetPurgeSlice sets how long one delivery of a purge job runs before it
// queues its continuation.
func (s *DB) SetPurgeSlice(d time.Duration) { s.set.purgeSlice = d }

// PurgeStages names the stages of an account's purge, in order.
func PurgeStages() []string {
	out := make([]string, len(purgeSteps))
	for i, p := range purgeSteps {
		out[i] = p.name
	}
	return out
}

// LegacyFlagSets are the sets of locked and suspended accounts an earlier
// version kept (MigrateAuthorFlags moves them).
func (k Keys) LegacyFlagSets() (locked, suspended string) {
	return k.legacyLockedUsers(), k.legacySuspended()
}

// SetEngagementChunk sets how many likers or comments of a post the
// likes and comments backfill reads at once, until the returned func.
func SetEngagementChunk(n int64) (restore func()) {
	old := engagementChunk
	engagementChunk = n
	return func() { engagementChunk = old }
}

// LayoutEngagement is the data layout field of that backfill.
const LayoutEngagement = layoutEngagement

// HiddenCount is the field of AuthorFlags that counts hidden accounts.
const HiddenCount = hiddenCount
