-- This script decides, in the user's slot, the fate of a registration left
-- pending (its process died or stalled between claiming the name and
-- writing the profile): when the profile exists the registration finished
-- and only its pending entry is left to remove (DONE); otherwise the id is
-- marked void for a day, so a late profile write is refused, and the
-- claims may be rolled back (VOID). Either answer is final and the script
-- answers the same when run again.
--
-- KEYS: User(id), UserVoid(id). ARGV: void lifetime (ms).

if redis.call('EXISTS', KEYS[1]) == 1 then return 'DONE' end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[1])
return 'VOID'
