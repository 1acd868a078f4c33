-- This script is the second step of a registration: it writes the new
-- user's profile hash in the user's slot, unless the registration was
-- abandoned and rolled back meanwhile (UserVoid set by
-- register_abandon.lua), in which case the claims are gone and the profile
-- must not appear. Writing the same fields again is harmless, so a retry
-- is safe.
--
-- KEYS: User(id), UserVoid(id). ARGV: field, value, ...

if redis.call('EXISTS', KEYS[2]) == 1 then return 'VOID' end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 'OK'
