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
-- KEYS: Followers. ARGV: page size, last member of the previous page ("":
-- the first page), its score.
-- Reply: {members, score of the last one (or false)}.

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
return {page, score}
