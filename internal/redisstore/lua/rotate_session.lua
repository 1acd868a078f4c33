-- This script moves a refresh-token family from its current token to the
-- successor, in one step so two refreshes racing on one token see one
-- rotation. Presenting the previous token again within the grace window
-- (two tabs, a retry after a lost reply) answers OK and changes nothing:
-- the successor is derived from the old token, so the caller hands out
-- the same one again. Any other token of the family, or the previous one
-- after the window, is reuse of a rotated token: the family is deleted.
-- Time is Redis's, so every gateway measures the window on one clock.
--
-- KEYS: Session(family). ARGV: old token hash, new token hash, ttl (ms),
-- grace (ms). Returns OK:<uid>, GONE or REUSED.

local s = redis.call('HMGET', KEYS[1], 'uid', 'cur', 'prev', 'at')
if not s[2] then return 'GONE' end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if s[2] == ARGV[1] then
  redis.call('HSET', KEYS[1], 'cur', ARGV[2], 'prev', ARGV[1], 'at', now)
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 'OK:' .. s[1]
end
if s[3] == ARGV[1] and s[2] == ARGV[2] and s[4] and now - tonumber(s[4]) < tonumber(ARGV[4]) then
  return 'OK:' .. s[1]
end
redis.call('DEL', KEYS[1])
return 'REUSED'
