package redisstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/socialgw/gateway/internal/social"
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
	// FanoutBatch is how many timelines one fan-out pipeline writes.
	FanoutBatch int
}

// Defaults of FeedConfig.
const (
	DefaultCelebrityThreshold = 10000
	DefaultInactiveAfter      = 7 * 24 * time.Hour
	DefaultHomeCap            = 800
	DefaultBackfill           = 200
	DefaultFanoutBatch        = 1000
)

// DefaultFeed returns the default configuration: hybrid mode.
func DefaultFeed() FeedConfig {
	return FeedConfig{
		Mode: Hybrid, CelebrityThreshold: DefaultCelebrityThreshold, InactiveAfter: DefaultInactiveAfter,
		HomeCap: DefaultHomeCap, Backfill: DefaultBackfill, FanoutBatch: DefaultFanoutBatch,
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
	}
	return nil
}

// SetFeed sets the timeline configuration; call it before serving.
func (s *Store) SetFeed(c FeedConfig) error {
	if err := c.Validate(); err != nil {
		return err
	}
	s.feed = c
	return nil
}

// Feed returns the timeline configuration.
func (s *Store) Feed() FeedConfig { return s.feed }

// Timeline cursors are the id of the last post shown; the next page is the
// posts with a smaller id. Ids only grow, so posts arriving while a reader
// pages land before the first page, never between pages: no duplicates and
// no skipped older posts.

// noCursor is the position before every post.
const noCursor = math.MaxInt64

// timelineCursor validates a page request and returns the id its cursor
// points at (noCursor for the first page).
func timelineCursor(p social.PageRequest) (int64, error) {
	if p.First < 1 || p.First > social.MaxFirst {
		return 0, social.Errorf(social.BadUserInput, "first must be between 1 and %d", social.MaxFirst)
	}
	if p.After == "" {
		return noCursor, nil
	}
	parts, err := social.DecodeCursor(p.After, 1)
	if err != nil {
		return 0, err
	}
	if !isID(parts[0]) {
		return 0, social.Errorf(social.BadUserInput, "malformed cursor")
	}
	n, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil {
		return 0, social.Errorf(social.BadUserInput, "malformed cursor")
	}
	return n, nil
}

// postCursor is the cursor of a post in any timeline.
func postCursor(id string) string { return social.EncodeCursor(id) }

// Reading a page drops what the viewer may not see, so a page reads more
// candidates than it shows, and reads again (from where it stopped) until
// the page is full or the source runs out: pages are full and HasNext is
// exact. The rounds are bounded: a page whose candidates are nearly all
// hidden from the viewer ends early, with HasNext set and the cursor of its
// last post.
const (
	pageRounds   = 6
	maxCandidate = 1000
)

// candidates is how many entries a round reads for a page of first posts
// (one more than first tells HasNext), growing from round to round.
func candidates(first, round int) int {
	n := (first + 1 + first/4 + 2) << round
	return min(n, maxCandidate)
}

// UserTimeline returns one page of userID's own posts as viewerID may see
// them, newest first.
func (s *Store) UserTimeline(ctx context.Context, viewerID, userID string, p social.PageRequest) (social.Connection[string], error) {
	c, err := s.UserPostsPage(ctx, viewerID, userID, p)
	return postIDs(c), err
}

// UserPostsPage is UserTimeline with the posts themselves, for callers that
// prime loaders with them.
//
// Each round costs two round trips: the page of UserPosts (ZREVRANGE BYSCORE
// below the cursor; on the first round with the viewer's block flags for
// userID, which end the page at once), then the visibility of those posts.
func (s *Store) UserPostsPage(ctx context.Context, viewerID, userID string, p social.PageRequest) (social.Connection[*social.Post], error) {
	return s.userPostsPage(ctx, viewerID, userID, p, nil)
}

// userPostsPage is UserPostsPage that also queues f's reads (when set)
// with the visibility check of the candidates.
func (s *Store) userPostsPage(ctx context.Context, viewerID, userID string, p social.PageRequest, f *pageFetch) (social.Connection[*social.Post], error) {
	before, err := timelineCursor(p)
	if err != nil || !isID(userID) {
		return social.Connection[*social.Post]{}, err
	}
	var out []*social.Post
	exhausted := false
	for round := 0; round < pageRounds && !exhausted && len(out) <= p.First; round++ {
		n := candidates(p.First, round)
		var ids *redis.StringSliceCmd
		var blocks, blockedBy *redis.BoolCmd
		_, err := s.rdb.Pipelined(ctx, func(pl redis.Pipeliner) error {
			ids = pl.ZRevRangeByScore(ctx, s.keys.UserPosts(userID), &redis.ZRangeBy{
				Max: "(" + strconv.FormatInt(before, 10), Min: "-inf", Count: int64(n),
			})
			if round == 0 && viewerID != "" && viewerID != userID {
				blocks = pl.SIsMember(ctx, s.keys.Blocks(viewerID), userID)
				blockedBy = pl.SIsMember(ctx, s.keys.BlockedBy(viewerID), userID)
			}
			return nil
		})
		if err != nil {
			return social.Connection[*social.Post]{}, fmt.Errorf("load posts of %s: %w", userID, err)
		}
		if blocks != nil && (blocks.Val() || blockedBy.Val()) {
			return social.Connection[*social.Post]{}, nil
		}
		page := ids.Val()
		exhausted = len(page) < n
		if len(page) == 0 {
			break
		}
		// Extras only for the first round's candidates: a page whose
		// candidates are mostly hidden must not pay them for every post it
		// reads; stage 3 fills in what later rounds' posts lack.
		extra := f
		if round > 0 {
			extra = nil
		}
		posts, err := s.visiblePosts(ctx, viewerID, page, repeat(userID, len(page)), extra)
		if err != nil {
			return social.Connection[*social.Post]{}, err
		}
		for _, post := range posts {
			if post != nil {
				out = append(out, post)
			}
		}
		before, _ = strconv.ParseInt(page[len(page)-1], 10, 64)
	}
	return postPage(out, p.First, !exhausted), nil
}

// postPage makes a page of up to first posts. HasNext is true when a
// further post was read, or when the source may hold more.
func postPage(posts []*social.Post, first int, more bool) social.Connection[*social.Post] {
	c := social.Connection[*social.Post]{HasNext: len(posts) > first || (more && len(posts) > 0)}
	posts = posts[:min(len(posts), first)]
	c.Items = posts
	c.Cursors = make([]string, len(posts))
	for i, p := range posts {
		c.Cursors[i] = postCursor(p.ID)
	}
	return c
}

// postIDs turns a page of posts into the page of their ids.
func postIDs(c social.Connection[*social.Post]) social.Connection[string] {
	out := social.Connection[string]{Cursors: c.Cursors, HasNext: c.HasNext, Total: c.Total}
	out.Items = make([]string, len(c.Items))
	for i, p := range c.Items {
		out.Items[i] = p.ID
	}
	return out
}

// Home timelines.
//
// Home(u) is a LIST of entries "<post id>:<author id>", sorted by post id,
// newest first, at most HomeCap long. A list of short strings is stored as
// a quicklist of listpacks: about 15 bytes an entry, where a sorted set
// past 128 entries becomes a skiplist of some 60+ (docs/fanout.md has the
// MEMORY USAGE figures). The author beside the id is what lets the page
// script drop unfollowed and muted authors, and the graph hooks remove an
// author's entries, without loading any post.
//
// HomeMark(u) is a hash of the list's bookkeeping:
//   - floor: the list holds every post of u's timeline with an id >= floor
//     (once fan-out is done); below it, pages pull from the followees' own
//     timelines. Trimming to the cap raises it to the oldest id kept; a
//     follow whose backfill was cut short raises it to the oldest id
//     copied; 0 or absent: the list is complete.
//   - active: the last home read (ms), written at most every activeEvery;
//   - stale: set when a fan-out skipped u as inactive; the next read
//     rebuilds the list before serving it;
//   - pull, pullprev, pullat: pull mode's marks (see fillHome).

// homeLib is the Lua shared by the scripts that write home lists.
const homeLib = `
local function entry_id(e) return tonumber(string.match(e, '^%d+')) end
local function entry_author(e) return string.match(e, ':(%d+)$') end
-- len, when the caller knows the list's length (LPUSH's reply), saves
-- an LLEN.
local function home_trim(home, mark, cap, len)
  if (len or redis.call('LLEN', home)) > cap then
    redis.call('LTRIM', home, 0, cap - 1)
    redis.call('HSET', mark, 'floor', entry_id(redis.call('LINDEX', home, -1)))
  end
end
-- home_insert puts entry (post pid) in its place in the list, newest
-- first, unless it is there already or below the floor, and trims the list
-- to cap. Nearly always the post is the newest: one LINDEX and one LPUSH.
-- floor, when the caller already read it, saves reading it again.
local function home_insert(home, mark, pid, entry, cap, floor)
  if floor == nil then floor = redis.call('HGET', mark, 'floor') end
  if pid < tonumber(floor or '0') then return 0 end
  local head = redis.call('LINDEX', home, 0)
  if not head or entry_id(head) < pid then
    home_trim(home, mark, cap, redis.call('LPUSH', home, entry))
    return 1
  else
    local pos, done = 0, false
    while not done do
      local chunk = redis.call('LRANGE', home, pos, pos + 63)
      for _, e in ipairs(chunk) do
        local id = entry_id(e)
        if id == pid then return 0 end
        if id < pid then
          redis.call('LINSERT', home, 'BEFORE', e, entry)
          done = true
          break
        end
      end
      if not done and #chunk < 64 then
        redis.call('RPUSH', home, entry)
        done = true
      end
      pos = pos + 64
    end
  end
  home_trim(home, mark, cap)
  return 1
end
`

// homeEntry is the home-list entry of a post.
func homeEntry(postID, authorID string) string { return postID + ":" + authorID }

// homeAllowLib decides, in the reader's slot, whether a home list may show
// an author: the reader themself, or someone they follow and have not
// muted. A block removes the follow edges both ways, so it is covered too.
// KEYS[3] is Following(reader), KEYS[4] Mutes(reader); ARGV[1] the reader.
const homeAllowLib = `
local allow_cache = {}
local function allowed(a)
  local v = allow_cache[a]
  if v == nil then
    v = a == ARGV[1] or (redis.call('ZSCORE', KEYS[3], a) ~= false and redis.call('SISMEMBER', KEYS[4], a) == 0)
    allow_cache[a] = v
  end
  return v
end
local function allowed_list(members)
  local out = {}
  for _, a in ipairs(members) do
    if a ~= ARGV[1] and allowed(a) then out[#out + 1] = a end
  end
  return out
end
`

// homePageScript reads one round of a home page from the list, in the
// reader's slot: it records the read as activity, says when the list must
// first be rebuilt or pulled, and returns the entries below the cursor
// whose authors the reader still follows and has not muted.
//
// KEYS: Home, HomeMark, Following, Mutes, CelebFollowing.
// ARGV: reader, cursor (exclusive; "" = none), n, now (ms), activeEvery
// (ms), pull mode ("1"), first page ("1").
//
// Reply: {"rebuild"|"pull", followees, pull, pullprev, pullat} or
// {"ok", floor, exhausted (0/1), entries, pulled authors (CelebFollowing,
// allowed), followees (allowed; only when the list is exhausted above a
// floor, for the pages below it)}.
var homePageScript = redis.NewScript(homeLib + homeAllowLib + `
local now = tonumber(ARGV[4])
local m = redis.call('HMGET', KEYS[2], 'active', 'floor', 'stale', 'pull', 'pullprev', 'pullat')
if not m[1] or now - tonumber(m[1]) >= tonumber(ARGV[5]) then redis.call('HSET', KEYS[2], 'active', ARGV[4]) end
local need = nil
if m[3] then need = 'rebuild'
elseif ARGV[6] == '1' and (ARGV[7] == '1' or not m[4]) then need = 'pull'
elseif ARGV[6] ~= '1' and m[4] then need = 'rebuild' end
if need then
  return {need, allowed_list(redis.call('ZRANGE', KEYS[3], 0, -1)), m[4] or '0', m[5] or '0', m[6] or '0'}
end
local floor = tonumber(m[2] or '0')
local n = tonumber(ARGV[3])
local pos = 0
if ARGV[2] ~= '' then
  local c = tonumber(ARGV[2])
  local lo, hi = 0, redis.call('LLEN', KEYS[1])
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if entry_id(redis.call('LINDEX', KEYS[1], mid)) < c then hi = mid else lo = mid + 1 end
  end
  pos = lo
end
local out, exhausted = {}, 0
local size = math.max(n, 32)
while true do
  local chunk = redis.call('LRANGE', KEYS[1], pos, pos + size - 1)
  local used = 0
  for _, e in ipairs(chunk) do
    used = used + 1
    if allowed(entry_author(e)) then out[#out + 1] = e end
    if #out == n then break end
  end
  if #chunk < size and used == #chunk then exhausted = 1 end
  if #out == n or exhausted == 1 then break end
  pos = pos + size
end
local followees = {}
if exhausted == 1 and floor > 0 then followees = allowed_list(redis.call('ZRANGE', KEYS[3], 0, -1)) end
return {'ok', floor, exhausted, out, allowed_list(redis.call('SMEMBERS', KEYS[5])), followees}
`)

// homeMergeScript merges entries into a home list in one step: the result
// is sorted newest first, without duplicates, without entries below the
// new floor or of authors the reader may no longer see, and at most cap
// long (trimming raises the floor to the oldest entry kept). Rebuilds,
// pulls and follow backfills use it; it is idempotent.
//
// KEYS: Home, HomeMark, Following, Mutes.
// ARGV: reader, cap, floor mode ("set" or "max"), floor, clear stale
// ("1"), pull marks (pull, pullprev, pullat; "" leaves them, "-" deletes
// them), then the entries.
var homeMergeScript = redis.NewScript(homeLib + homeAllowLib + `
local cap = tonumber(ARGV[2])
local floor = tonumber(ARGV[4])
if ARGV[3] == 'max' then floor = math.max(floor, tonumber(redis.call('HGET', KEYS[2], 'floor') or '0')) end
local all, seen = {}, {}
local function add(e)
  local id = entry_id(e)
  if id and id >= floor and not seen[id] and allowed(entry_author(e)) then
    seen[id] = true
    all[#all + 1] = {id, e}
    return true
  end
  return false
end
local old = redis.call('LRANGE', KEYS[1], 0, -1)
local changed = false
for _, e in ipairs(old) do if not add(e) then changed = true end end
for i = 9, #ARGV do if add(ARGV[i]) then changed = true end end
if #all > cap then
  table.sort(all, function(a, b) return a[1] > b[1] end)
  floor = all[cap][1]
  for i = #all, cap + 1, -1 do all[i] = nil end
  changed = true
end
-- A merge that adds and drops nothing leaves the list as it is.
if changed then
  table.sort(all, function(a, b) return a[1] > b[1] end)
  redis.call('DEL', KEYS[1])
  for i = 1, #all, 500 do
    local part = {}
    for j = i, math.min(i + 499, #all) do part[#part + 1] = all[j][2] end
    redis.call('RPUSH', KEYS[1], unpack(part))
  end
end
redis.call('HSET', KEYS[2], 'floor', floor)
if ARGV[5] == '1' then redis.call('HDEL', KEYS[2], 'stale') end
if ARGV[6] == '-' then
  redis.call('HDEL', KEYS[2], 'pull', 'pullprev', 'pullat')
elseif ARGV[6] ~= '' then
  redis.call('HSET', KEYS[2], 'pull', ARGV[6], 'pullprev', ARGV[7], 'pullat', ARGV[8])
end
return #all
`)

// homePurgeScript removes an author's entries from a reader's home list,
// and the author from the reader's pulled authors, unless the reader (again)
// follows the author without muting them: a hook that runs late, after a
// new follow, then removes nothing. Idempotent.
//
// KEYS: Home, HomeMark, Following, Mutes, CelebFollowing. ARGV: reader,
// author.
var homePurgeScript = redis.NewScript(homeLib + homeAllowLib + `
if allowed(ARGV[2]) then return 0 end
if redis.call('ZSCORE', KEYS[3], ARGV[2]) == false then redis.call('SREM', KEYS[5], ARGV[2]) end
local keep, removed = {}, 0
for _, e in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  if entry_author(e) == ARGV[2] then removed = removed + 1 else keep[#keep + 1] = e end
end
if removed == 0 then return 0 end
redis.call('DEL', KEYS[1])
for i = 1, #keep, 500 do redis.call('RPUSH', KEYS[1], unpack(keep, i, math.min(i + 499, #keep))) end
return removed
`)

// homeKeys are the keys of u's home scripts, in the order they name them.
func (s *Store) homeKeys(u string) []string {
	k := s.keys
	return []string{k.Home(u), k.HomeMark(u), k.Following(u), k.Mutes(u), k.CelebFollowing(u)}
}

// HomeTimeline returns one page of viewerID's home timeline: their own
// posts and those of the users they follow, newest first, as they may see
// them.
func (s *Store) HomeTimeline(ctx context.Context, viewerID string, p social.PageRequest) (social.Connection[string], error) {
	c, err := s.HomePostsPage(ctx, viewerID, p)
	return postIDs(c), err
}

// HomePostsPage is HomeTimeline with the posts themselves, for callers that
// prime loaders with them.
//
// A page merges up to three sources, newest first:
//   - the home list, which holds every post of the timeline with an id at
//     or above its floor (read by homePageScript, which also drops authors
//     the reader no longer follows or muted);
//   - above the floor, the own timelines of the followed authors that are
//     pulled rather than pushed (celebrities, hybrid mode);
//   - below the floor (beyond the cap, or beyond a cut-short backfill), the
//     own timelines of everyone the reader follows, and the reader's own.
//
// Every candidate then passes the read-time visibility check (deleted
// posts, audience, blocks either way). A page of a push-mode reader costs
// two round trips (the list script, then the visibility pipeline); pulled
// authors add one pipeline; a hybrid reader coming back after inactivity,
// and every first page in pull mode, first fill the list (three more:
// following list, pull pipeline, merge script).
func (s *Store) HomePostsPage(ctx context.Context, viewerID string, p social.PageRequest) (social.Connection[*social.Post], error) {
	return s.homePostsPage(ctx, viewerID, p, nil)
}

// homePostsPage is HomePostsPage that also queues f's reads (when set)
// with the visibility check of the candidates.
func (s *Store) homePostsPage(ctx context.Context, viewerID string, p social.PageRequest, f *pageFetch) (social.Connection[*social.Post], error) {
	before, err := timelineCursor(p)
	if err != nil {
		return social.Connection[*social.Post]{}, err
	}
	if !isID(viewerID) {
		return social.Connection[*social.Post]{}, social.Errorf(social.Unauthenticated, "authentication required")
	}
	h := &homePage{s: s, viewer: viewerID, first: p.First, before: before, firstPage: p.After == "", fetch: f}
	c, err := h.read(ctx)
	if err != nil {
		return c, fmt.Errorf("home timeline of %s: %w", viewerID, err)
	}
	return c, nil
}

// homePage is the state of reading one home page.
type homePage struct {
	s         *Store
	viewer    string
	first     int
	before    int64 // everything newer was read: the next round reads below it
	firstPage bool
	fetch     *pageFetch // what to read along with the posts, or nil

	floor     int64
	listDone  bool          // the list has nothing more below before
	below     bool          // reading below the floor
	sources   []*pullSource // own timelines read at read time
	followees []string      // whom the reader follows, for below the floor
	out       []*social.Post
}

// pullSource is one author's own timeline read at read time.
type pullSource struct {
	author string
	cmd    *redis.StringSliceCmd
	done   bool
}

// listRound is the reply of homePageScript.
type listRound struct {
	need      string // "", "rebuild" or "pull"
	followees []string
	marks     [3]int64 // pull, pullprev, pullat
	floor     int64
	exhausted bool
	entries   []homeItem
	pulled    []string
}

// homeItem is a home-list entry.
type homeItem struct {
	id     int64
	author string
}

func (h *homePage) read(ctx context.Context) (social.Connection[*social.Post], error) {
	s := h.s
	// The first list read may ask to fill the list first (a hybrid reader
	// back from inactivity, or pull mode); after one fill it does not ask
	// again, the limit is a guard.
	var list *listRound
	for fills := 0; list == nil; fills++ {
		var cmd *redis.Cmd
		if _, err := s.pipelined(ctx, func(p redis.Pipeliner) error {
			cmd = h.queueList(ctx, p, candidates(h.first, 0), fills == 0)
			return nil
		}); err != nil {
			return social.Connection[*social.Post]{}, err
		}
		r, err := parseListRound(cmd)
		if err != nil {
			return social.Connection[*social.Post]{}, err
		}
		switch {
		case r.need == "":
			list = r
		case fills == 2:
			return social.Connection[*social.Post]{}, fmt.Errorf("home list still needs a %s after filling it", r.need)
		default:
			if err := s.fillHome(ctx, h.viewer, r); err != nil {
				return social.Connection[*social.Post]{}, err
			}
		}
	}
	h.useList(list)

	exhausted := false
	for round := 0; round < pageRounds && !exhausted && len(h.out) <= h.first; round++ {
		n := candidates(h.first, round)
		if round > 0 {
			list = nil
		}
		// One pipeline: the list (after round 0) and every open source.
		var cmd *redis.Cmd
		queued := false
		_, err := s.pipelined(ctx, func(p redis.Pipeliner) error {
			cmd, queued = nil, false
			if round > 0 && !h.below && !h.listDone {
				cmd, queued = h.queueList(ctx, p, n, false), true
			}
			if h.queueSources(ctx, p, n) > 0 {
				queued = true
			}
			if !queued {
				return errNothingQueued
			}
			return nil
		})
		if err != nil && err != errNothingQueued {
			return social.Connection[*social.Post]{}, err
		}
		if cmd != nil {
			if list, err = parseListRound(cmd); err != nil {
				return social.Connection[*social.Post]{}, err
			}
			h.useList(list)
		}
		if exhausted, err = h.merge(ctx, list, n); err != nil {
			return social.Connection[*social.Post]{}, err
		}
	}
	return postPage(h.out, h.first, !exhausted), nil
}

// errNothingQueued ends a pipeline function that had nothing to send.
var errNothingQueued = errors.New("nothing queued")

// queueList queues homePageScript for one round.
func (h *homePage) queueList(ctx context.Context, p redis.Pipeliner, n int, mayPull bool) *redis.Cmd {
	s := h.s
	cursor := ""
	if h.before != noCursor {
		cursor = strconv.FormatInt(h.before, 10)
	}
	pull, first := "0", "0"
	if s.feed.Mode == Pull {
		pull = "1"
	}
	if mayPull && h.firstPage {
		first = "1"
	}
	return homePageScript.EvalSha(ctx, p, s.homeKeys(h.viewer),
		h.viewer, cursor, n, s.now().UnixMilli(), s.activeEvery().Milliseconds(), pull, first)
}

// useList takes in what a list read says about the sources.
func (h *homePage) useList(r *listRound) {
	h.floor = r.floor
	h.listDone = r.exhausted
	if h.sources == nil {
		h.sources = make([]*pullSource, 0, len(r.pulled))
		for _, a := range r.pulled {
			h.sources = append(h.sources, &pullSource{author: a})
		}
	}
	if r.followees != nil {
		h.followees = r.followees
	}
}

// queueSources queues the next read of every open source and returns how
// many it queued.
func (h *homePage) queueSources(ctx context.Context, p redis.Pipeliner, n int) int {
	lo := "-inf"
	if !h.below {
		lo = strconv.FormatInt(h.floor, 10)
	}
	queued := 0
	for _, src := range h.sources {
		src.cmd = nil
		if src.done {
			continue
		}
		src.cmd = p.ZRevRangeByScore(ctx, h.s.keys.UserPosts(src.author), &redis.ZRangeBy{
			Max: "(" + strconv.FormatInt(h.before, 10), Min: lo, Count: int64(n),
		})
		queued++
	}
	return queued
}

// merge takes the posts read in one round that are certainly next in the
// page (newer than the oldest post of any source that may hold more),
// checks them for the viewer and adds the visible ones. It reports whether
// everything is read.
func (h *homePage) merge(ctx context.Context, list *listRound, n int) (bool, error) {
	var items []homeItem
	bound, more := int64(-1), false
	if list != nil && !h.below {
		items = append(items, list.entries...)
		if !list.exhausted && len(list.entries) > 0 {
			more, bound = true, list.entries[len(list.entries)-1].id
		}
	}
	for _, src := range h.sources {
		if src.cmd == nil {
			continue
		}
		ids := src.cmd.Val()
		for _, id := range ids {
			n, _ := strconv.ParseInt(id, 10, 64)
			items = append(items, homeItem{id: n, author: src.author})
		}
		if len(ids) < n {
			src.done = true
		} else if last := items[len(items)-1].id; !more || last > bound {
			more, bound = true, last
		}
		src.cmd = nil
	}
	slices.SortFunc(items, func(a, b homeItem) int { return cmp.Compare(b.id, a.id) })
	ids := make([]string, 0, len(items))
	authors := make([]string, 0, len(items))
	for i, it := range items {
		if (more && it.id < bound) || (i > 0 && it.id == items[i-1].id) {
			continue
		}
		ids = append(ids, strconv.FormatInt(it.id, 10))
		authors = append(authors, it.author)
	}
	if len(ids) > 0 {
		posts, err := h.s.visiblePosts(ctx, h.viewer, ids, authors, h.fetch)
		h.fetch = nil // extras for the first round only, as at userPostsPage
		if err != nil {
			return false, err
		}
		for _, p := range posts {
			if p != nil {
				h.out = append(h.out, p)
			}
		}
	}
	switch {
	case more:
		h.before = bound
	case !h.below && h.floor > 0:
		// Everything at or above the floor is read: go on below it, in the
		// own timelines of everyone the reader follows.
		h.below = true
		h.before = min(h.before, h.floor)
		h.sources = make([]*pullSource, 0, len(h.followees)+1)
		for _, a := range append(h.followees, h.viewer) {
			h.sources = append(h.sources, &pullSource{author: a})
		}
	default:
		return true, nil
	}
	return false, nil
}

// parseListRound reads a homePageScript reply.
func parseListRound(c *redis.Cmd) (*listRound, error) {
	res, err := c.Slice()
	if err != nil {
		return nil, fmt.Errorf("read home list: %w", err)
	}
	bad := fmt.Errorf("read home list: unexpected reply %v", res)
	if len(res) < 5 {
		return nil, bad
	}
	tag, _ := res[0].(string)
	r := &listRound{}
	switch tag {
	case "rebuild", "pull":
		r.need = tag
		r.followees = strs(res[1])
		for i := range r.marks {
			s, _ := res[2+i].(string)
			r.marks[i], _ = strconv.ParseInt(s, 10, 64)
		}
		return r, nil
	case "ok":
		if len(res) < 6 {
			return nil, bad
		}
		r.floor, _ = res[1].(int64)
		ex, _ := res[2].(int64)
		r.exhausted = ex == 1
		for _, e := range strs(res[3]) {
			it, ok := parseEntry(e)
			if ok {
				r.entries = append(r.entries, it)
			}
		}
		r.pulled = strs(res[4])
		if f := strs(res[5]); len(f) > 0 {
			r.followees = f
		}
		return r, nil
	}
	return nil, bad
}

// strs reads an array reply of strings.
func strs(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, x := range arr {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// parseEntry reads a home-list entry "<post>:<author>".
func parseEntry(e string) (homeItem, bool) {
	post, author, ok := strings.Cut(e, ":")
	id, err := strconv.ParseInt(post, 10, 64)
	if !ok || err != nil {
		return homeItem{}, false
	}
	return homeItem{id: id, author: author}, true
}

// activeEvery is how stale a reader's activity mark may get before a read
// writes it again: a write per hour at most, not per read.
func (s *Store) activeEvery() time.Duration {
	return min(time.Hour, s.feed.InactiveAfter/4)
}

// pullGrace is how long a post may take from its id (INCR) to its place in
// its author's timeline (ZADD) and still be caught by pull mode: a pull
// starts from the mark of a pull at least this old, so a post whose id is
// below the newest mark but which arrived just after that pull is read by
// the next one.
const pullGrace = 5 * time.Second

// fillHome rebuilds or pulls viewer's home list from the own timelines of
// the users they follow (and their own): the newest HomeCap posts of each
// for a rebuild, those newer than the pull mark for a pull. It costs one
// pipeline (one ZREVRANGEBYSCORE per followee) and one merge script.
func (s *Store) fillHome(ctx context.Context, viewer string, r *listRound) error {
	from := int64(0)
	if r.need == "pull" {
		from = r.marks[1]
	}
	authors := append(slices.Clip(r.followees), viewer)
	cmds := make([]*redis.StringSliceCmd, len(authors))
	cap := s.feed.HomeCap
	_, err := s.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, a := range authors {
			cmds[i] = p.ZRevRangeByScore(ctx, s.keys.UserPosts(a), &redis.ZRangeBy{
				Max: "+inf", Min: "(" + strconv.FormatInt(from, 10), Count: int64(cap),
			})
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("pull followees' posts: %w", err)
	}
	var entries []any
	seen, cut := int64(0), int64(0)
	for i, c := range cmds {
		ids := c.Val()
		for _, id := range ids {
			entries = append(entries, homeEntry(id, authors[i]))
		}
		if len(ids) > 0 {
			n, _ := strconv.ParseInt(ids[0], 10, 64)
			seen = max(seen, n)
		}
		if len(ids) == cap {
			// This author may have more: the list is complete only down to
			// the oldest post read from them.
			n, _ := strconv.ParseInt(ids[len(ids)-1], 10, 64)
			cut = max(cut, n)
		}
	}
	mode, floor := "max", int64(0) // a pull that was not cut keeps the floor
	if cut > 0 {
		mode, floor = "set", cut
	} else if from == 0 {
		mode = "set" // a complete rebuild: the list holds everything
	}
	marks := []any{"-", "", ""}
	if s.feed.Mode == Pull {
		now := s.now().UnixMilli()
		pull, prev, at := r.marks[0], r.marks[1], r.marks[2]
		if now-at >= pullGrace.Milliseconds() {
			prev, at = pull, now
		}
		marks = []any{max(pull, seen), prev, at}
	}
	args := append([]any{viewer, cap, mode, floor, "1"}, marks...)
	err = homeMergeScript.Run(ctx, s.rdb, s.homeKeys(viewer)[:4], append(args, entries...)...).Err()
	if err != nil {
		return fmt.Errorf("fill home list: %w", err)
	}
	return nil
}

// pipelined runs fn in a pipeline in which scripts are called by EVALSHA
// (a pipeline cannot fall back on NOSCRIPT itself). When Redis has lost its
// script cache (a restart, a failover), it loads the scripts and runs the
// pipeline again: everything this package pipelines is idempotent.
func (s *Store) pipelined(ctx context.Context, fn func(redis.Pipeliner) error) ([]redis.Cmder, error) {
	cmds, err := s.rdb.Pipelined(ctx, fn)
	if err == nil || !noScript(cmds) {
		return cmds, err
	}
	for _, sc := range pipelinedScripts {
		if err := sc.Load(ctx, s.rdb).Err(); err != nil {
			return nil, fmt.Errorf("load script: %w", err)
		}
	}
	return s.rdb.Pipelined(ctx, fn)
}

// pipelinedScripts are the scripts run by EVALSHA in pipelines.
var pipelinedScripts = []*redis.Script{commentRowsScript, homePageScript, homeMergeScript, homePurgeScript, authorPostScript, repostLinkScript, deliverScript}

func noScript(cmds []redis.Cmder) bool {
	for _, c := range cmds {
		if err := c.Err(); err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
			return true
		}
	}
	return false
}
