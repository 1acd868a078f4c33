-- This script moves a refresh-token family from its current token to the
-- successor, in one step so two refreshes racing on one token see one
-- rotation. Presenting the previous token again within the grace window
-- (two tabs, a retry after a lost reply) answers OK and changes nothing:
-- the successor is derived from the old token, so the caller hands out
-- the same one again.
--
-- Reuse is the presentation of a token this family really issued and
-- rotated away from: the previous one after the window, or one of the
-- earlier generations whose hash prefixes the family keeps in `old`
-- (newest first, at most ARGV[5] of ARGV[6] hex digits each). Reuse
-- deletes the family. Any other secret under the family's name (a forgery
-- built from a leaked family id, another family's secret) is UNKNOWN and
-- changes nothing: knowing the family alone must not end the session.
-- Time is Redis's, so every gateway measures the window on one clock.
--
-- KEYS: Session(family). ARGV: old token hash, new token hash, ttl (ms),
-- grace (ms), generations kept, hex digits kept of each. Returns
-- OK:<uid>, GONE, UNKNOWN or REUSED.

local s = redis.call('HMGET', KEYS[1], 'uid', 'cur', 'prev', 'at', 'old')
if not s[2] then return 'GONE' end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local keep, width = tonumber(ARGV[5]), tonumber(ARGV[6])
local old = s[5] or ''
if s[2] == ARGV[1] then
  old = string.sub(string.sub(ARGV[1], 1, width) .. old, 1, keep * width)
  redis.call('HSET', KEYS[1], 'cur', ARGV[2], 'prev', ARGV[1], 'at', now, 'old', old)
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return 'OK:' .. s[1]
end
if s[3] == ARGV[1] and s[2] == ARGV[2] and s[4] and now - tonumber(s[4]) < tonumber(ARGV[4]) then
  return 'OK:' .. s[1]
end
-- A family rotated before `old` existed knows its previous token only.
local issued = s[3] == ARGV[1]
local h = string.sub(ARGV[1], 1, width)
for i = 1, #old, width do
  if string.sub(old, i, i + width - 1) == h then
    issued = true
    break
  end
end
if not issued then return 'UNKNOWN' end
redis.call('DEL', KEYS[1])
return 'REUSED'
