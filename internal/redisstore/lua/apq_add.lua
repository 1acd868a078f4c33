-- This script stores one automatic persisted query and keeps the cache
-- bounded: every entry expires after the TTL, and the index (a zset of
-- hashes by time added) evicts the oldest entries beyond the cap, in the
-- same step, so concurrent adds from many gateways cannot overshoot it.
-- All keys share the {apq} hash tag.
--
-- KEYS: APQIndex, APQ(hash). ARGV: hash, document, ttl (ms), cap, entry
-- key prefix (APQ("") — the entry key of an evicted hash is prefix..hash).

local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
local over = redis.call('ZCARD', KEYS[1]) - tonumber(ARGV[4])
if over > 0 then
  for i, h in ipairs(redis.call('ZPOPMIN', KEYS[1], over)) do
    -- ZPOPMIN answers member, score, member, score, …
    if i % 2 == 1 then redis.call('DEL', ARGV[5] .. h) end
  end
end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
