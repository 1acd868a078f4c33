-- This script records the follow on both sides (the viewer's Following,
-- the target's Followers) unless the target does not exist or a block
-- stands either way; the viewer's Blocks and its mirror BlockedBy answer
-- both questions.
--
-- KEYS: user hash of the target, Following(viewer), Followers(target),
-- Blocks(viewer), BlockedBy(viewer). ARGV: viewer, target, time (ms).

if redis.call('EXISTS', KEYS[1]) == 0 then return 'NOT_FOUND' end
if redis.call('SISMEMBER', KEYS[4], ARGV[2]) == 1 or redis.call('SISMEMBER', KEYS[5], ARGV[2]) == 1 then
  return 'FORBIDDEN'
end
redis.call('ZADD', KEYS[2], 'NX', ARGV[3], ARGV[2])
redis.call('ZADD', KEYS[3], 'NX', ARGV[3], ARGV[1])
return 'OK'
