-- This script is the second step of a registration: it writes the new
-- user's profile hash in the user's slot, unless the registration was
-- abandoned and rolled back meanwhile (UserVoid set by
-- register_abandon.lua), in which case the claims are gone and the profile
-- must not appear. Writing the same fields again is harmless, so a retry
-- is safe.
--
-- The user's home mark is written with the profile: a home list is kept
-- up to date (fan-out, backfills) only where the mark exists, and a read
-- that finds no mark rebuilds the list (home.go). From the start the
-- mark says the empty list is complete; in hybrid mode it expires like
-- any reader's, INACTIVE_DAYS after registering unless the user reads.
--
-- KEYS: User(id), UserVoid(id), HomeMark(id). ARGV: the registration time
-- (ms), the mark's TTL (ms; 0: none), then the profile: field, value, ...

if redis.call('EXISTS', KEYS[2]) == 1 then return 'VOID' end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
if redis.call('HSETNX', KEYS[3], 'active', ARGV[1]) == 1 and tonumber(ARGV[2]) > 0 then
  redis.call('PEXPIRE', KEYS[3], ARGV[2])
end
return 'OK'
