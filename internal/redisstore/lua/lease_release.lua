-- This script gives back a lease (a string set with NX PX) only while it
-- is still the caller's: a lease that expired and was taken by another
-- worker stays theirs.
--
-- KEYS: the lease. ARGV: the caller's token.

if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
