-- This script claims an idempotency key for one execution of a mutation:
-- a repeat of a key finds its record and is answered from it (the stored
-- answer, a pending execution, or a request that does not match), a new
-- key gets a pending record, owned by a claim token, in one atomic step,
-- so that two gateways claiming the same key at once cannot both run it.
-- It also keeps the user's keys bounded: the index (a zset of the user's
-- keys by claim time) drops the entries older than the TTL and evicts the
-- oldest keys past the cap, with their records. Both keys carry the
-- user's hash tag.
--
-- A record is a hash: h (the request's hash), st ("p" pending, "d" done),
-- o (the claim token), a (the answer, once done), exp (when the record
-- ends, ms by the store's clock). A record whose exp has passed counts as
-- absent (Redis drops it soon after, by its own TTL).
--
-- KEYS: IdemRecord(user, key), IdemIndex(user). ARGV: now (ms), request
-- hash, claim token, pending lifetime (ms), TTL (ms), cap, key, record key
-- prefix (IdemRecord(user, "")).
-- Returns {"claimed"}, {"done", answer}, {"pending", ms left} or
-- {"mismatch"}.

local now = tonumber(ARGV[1])
local PENDING, DONE = 'p', 'd'
local rec = redis.call('HMGET', KEYS[1], 'h', 'st', 'a', 'exp')
if rec[1] and tonumber(rec[4]) > now then
  if rec[1] ~= ARGV[2] then return {'mismatch'} end
  if rec[2] == DONE then return {'done', rec[3]} end
  return {'pending', tostring(tonumber(rec[4]) - now)}
end
local pending, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - ttl)
redis.call('ZREM', KEYS[2], ARGV[7])
local over = redis.call('ZCARD', KEYS[2]) + 1 - tonumber(ARGV[6])
if over > 0 then
  for i, k in ipairs(redis.call('ZPOPMIN', KEYS[2], over)) do
    -- ZPOPMIN answers member, score, member, score, …
    if i % 2 == 1 then redis.call('DEL', ARGV[8] .. k) end
  end
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'h', ARGV[2], 'st', PENDING, 'o', ARGV[3], 'exp', now + pending)
redis.call('PEXPIRE', KEYS[1], pending)
redis.call('ZADD', KEYS[2], now, ARGV[7])
redis.call('PEXPIRE', KEYS[2], ttl)
return {'claimed'}
