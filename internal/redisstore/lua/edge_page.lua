-- This script returns ZCARD and up to ARGV[3] entries (WITHSCORES) of
-- the zset KEYS[1] that come after the position (ARGV[1] score, ARGV[2]
-- member) in newest-first order; an empty ARGV[1] is the start.
--
-- When the cursor's member is still there with the cursor's score, its
-- ZREVRANK is the position (O(log n)). Otherwise (unfollowed, or followed
-- again later) the position is the number of entries that come before it:
-- those with a higher score plus those with the same score and a greater
-- member. Members are compared byte by byte as Redis does; Lua's own string
-- comparison follows the server's collation locale.
--
-- With KEYS[2] (the Blocks set of the zset's owner) and ARGV[4] (the
-- viewer), a viewer the owner blocked gets an empty page and a zero total:
-- a block hides the blocker's followers and following from the blocked.

if KEYS[2] and redis.call('SISMEMBER', KEYS[2], ARGV[4]) == 1 then return {0, {}} end
local key, n = KEYS[1], tonumber(ARGV[3])
local start = 0
if ARGV[1] ~= '' then
  local sc = redis.call('ZSCORE', key, ARGV[2])
  if sc and tonumber(sc) == tonumber(ARGV[1]) then
    start = redis.call('ZREVRANK', key, ARGV[2]) + 1
  else
    local function greater(a, b)
      for i = 1, math.min(#a, #b) do
        local x, y = string.byte(a, i), string.byte(b, i)
        if x ~= y then return x > y end
      end
      return #a > #b
    end
    start = redis.call('ZCOUNT', key, '(' .. ARGV[1], '+inf')
    for _, m in ipairs(redis.call('ZRANGE', key, ARGV[1], ARGV[1], 'BYSCORE')) do
      if greater(m, ARGV[2]) then start = start + 1 end
    end
  end
end
return {redis.call('ZCARD', key), redis.call('ZRANGE', key, start, start + n - 1, 'REV', 'WITHSCORES')}
