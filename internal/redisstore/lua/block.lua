-- This script removes the follow edges both ways and records the block on
-- both sides.
--
-- KEYS: user hash of the target, Following(viewer), Followers(viewer),
-- Following(target), Followers(target), Blocks(viewer), BlockedBy(target).
-- ARGV: viewer, target.

if redis.call('EXISTS', KEYS[1]) == 0 then return 'NOT_FOUND' end
redis.call('ZREM', KEYS[2], ARGV[2])
redis.call('ZREM', KEYS[3], ARGV[2])
redis.call('ZREM', KEYS[4], ARGV[1])
redis.call('ZREM', KEYS[5], ARGV[1])
redis.call('SADD', KEYS[6], ARGV[2])
redis.call('SADD', KEYS[7], ARGV[1])
return 'OK'
