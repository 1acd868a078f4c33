-- This script adds a like if the post still exists, in one step, so a like
-- can not outlive a post deleted concurrently. The score is Redis's own
-- clock: every like of a post is ordered by one clock whatever gateway
-- took it. ZADD NX makes a retried or repeated like a no-op. ARGV[2]
-- 'unlike' removes the like instead. Either way the post's nlikes is set
-- to the likers' count (lib/counts.lua), and the viewer's l flag in
-- PostViewers to the like (lib/flags.lua).
--
-- KEYS: the post hash, Likers, PostViewers. ARGV: the viewer, 'like' or 'unlike'.

if ARGV[2] == 'unlike' then
  redis.call('ZREM', KEYS[2], ARGV[1])
  set_flag(KEYS[3], ARGV[1], 'l', false)
  set_count(KEYS[1], F.post.nlikes, redis.call('ZCARD', KEYS[2]))
  return 1
end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local t = redis.call('TIME')
redis.call('ZADD', KEYS[2], 'NX', t[1] * 1000 + math.floor(t[2] / 1000), ARGV[1])
set_flag(KEYS[3], ARGV[1], 'l', true)
set_count(KEYS[1], F.post.nlikes, redis.call('ZCARD', KEYS[2]))
return 1
