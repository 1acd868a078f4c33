-- This script settles a claimed idempotency key once its execution has
-- ended: with an answer, the record becomes done and keeps the answer
-- for the TTL; without one (the execution failed in a way a retry may
-- mend, or was cut off), the record and its index entry go, so that a
-- retry runs. Only the claim's owner settles it (its claim token): a
-- record that expired and was claimed again by a retry is left alone.
--
-- KEYS: IdemRecord(user, key), IdemIndex(user). ARGV: now (ms), claim
-- token, TTL (ms), key, answer (absent: release).
-- Returns 1 when settled, 0 when the claim was no longer this one.

local PENDING, DONE = 'p', 'd'
local owner, state = unpack(redis.call('HMGET', KEYS[1], 'o', 'st'))
if owner ~= ARGV[2] or state ~= PENDING then
  return 0
end
if ARGV[5] == nil then
  redis.call('DEL', KEYS[1])
  redis.call('ZREM', KEYS[2], ARGV[4])
  return 1
end
local ttl = tonumber(ARGV[3])
redis.call('HSET', KEYS[1], 'st', DONE, 'a', ARGV[5], 'exp', tonumber(ARGV[1]) + ttl)
redis.call('PEXPIRE', KEYS[1], ttl)
return 1
