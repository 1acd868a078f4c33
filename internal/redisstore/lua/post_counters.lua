-- This script returns a post's counters, likes, comments and reposts, as
-- its hash holds them (COUNTERS: nlikes, ncomments, nreposts, in
-- lib/counts.lua from the post record's names), and sets the ones
-- missing from the sizes of what they count: a post written before its
-- hash held counters gets them on its first read here (idempotent: the
-- one write of this script, once per post), and from then on the writers
-- keep them (lib/counts.lua). A post that does not exist answers 0, 0, 0
-- and is not written.
--
-- KEYS: the post hash, Likers, PostComments, PostReposts (the post's
-- {p<id>} slot).

local out = redis.call('HMGET', KEYS[1], unpack(COUNTERS))
local exists = nil
local sizes = {'ZCARD', 'LLEN', 'SCARD'}
for i = 1, 3 do
  local n = tonumber(out[i])
  if not n then
    if exists == nil then exists = redis.call('EXISTS', KEYS[1]) == 1 end
    n = 0
    if exists then
      n = redis.call(sizes[i], KEYS[i + 1])
      redis.call('HSET', KEYS[1], COUNTERS[i], n)
    end
  end
  out[i] = n
end
return out
