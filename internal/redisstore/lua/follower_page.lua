-- This script reads the next page of a user's followers for fan-out, in
-- the followed user's slot: the members after the last one of the previous
-- page, in the set's order (follow time, then id), without their scores.
--
-- Why not ZSCAN: ZSCAN replies with every member's score, which Redis
-- formats as a long double, and that formatting cost about as much as
-- delivering to the member (docs/performance.md, "Fan-out"). Ranks are read
-- here from the previous page's last member, so, like ZSCAN, the walk
-- returns every member present for the whole walk at least once, whatever
-- follows and unfollows happen between pages: an unfollow before the
-- cursor shifts the ranks, not the cursor's member. Should that member be
-- gone itself, or have followed again (a new score), the page starts at
-- the first member with the old score, which may repeat a few members
-- (delivery is idempotent) and skips none. A follow lands at the end (its
-- score is the time), or is backfilled by the follow itself.
--
-- Muted: with KEYS[2] (the followed user's MutedBy, in the same slot),
-- the reply also names the page's members who mute the followed user, so
-- fan-out leaves them out without a look at each reader's own keys. Most
-- users are muted by no one: then SCARD is the whole cost.
--
-- KEYS: Followers[, MutedBy]. ARGV: page size, last member of the previous
-- page ("": the first page), its score.
-- Reply: {members, score of the last one (or false), members of the page
-- who mute the followed user}.

local start = 0
if ARGV[2] ~= '' then
  if redis.call('ZSCORE', KEYS[1], ARGV[2]) == ARGV[3] then
    start = redis.call('ZRANK', KEYS[1], ARGV[2]) + 1
  else
    start = redis.call('ZCOUNT', KEYS[1], '-inf', '(' .. ARGV[3])
  end
end
local page = redis.call('ZRANGE', KEYS[1], start, start + tonumber(ARGV[1]) - 1)
local score = false
if #page > 0 then score = redis.call('ZSCORE', KEYS[1], page[#page]) end
local muted = {}
if KEYS[2] and #page > 0 and redis.call('SCARD', KEYS[2]) > 0 then
  -- In parts: unpack is bounded by Lua's stack.
  for i = 1, #page, 1000 do
    local j = math.min(i + 999, #page)
    local is = redis.call('SMISMEMBER', KEYS[2], unpack(page, i, j))
    for k, m in ipairs(is) do
      if m == 1 then muted[#muted + 1] = page[i + k - 1] end
    end
  end
end
return {page, score, muted}
