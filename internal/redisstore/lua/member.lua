-- This script serves the edits that add or remove one member per key
-- (unfollow, unblock, mute, unmute): when the target exists, it runs
-- ARGV[1] (SADD, SREM or ZREM, chosen by the Go code, never by a client)
-- on each KEYS[i] (i >= 2) with member ARGV[i].

if redis.call('EXISTS', KEYS[1]) == 0 then return 'NOT_FOUND' end
for i = 2, #KEYS do redis.call(ARGV[1], KEYS[i], ARGV[i]) end
return 'OK'
