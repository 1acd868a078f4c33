-- This script is the user's side of a pin, in the user's slot: it adds
-- the post to Pins unless that would pass the cap, or removes it. A post
-- pinned already keeps its place (a repeat or a retry is a no-op).
--
-- KEYS: Pins. ARGV: post id, 'pin' or 'unpin', now (ms), the cap.
-- Reply: 1 done (or already so), 0 the cap is reached (nothing written).

if ARGV[2] == 'unpin' then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 1 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[4]) then return 0 end
-- Scores grow with every pin, so two pins within one millisecond keep
-- their order (most recently pinned first).
local score = tonumber(ARGV[3])
local top = redis.call('ZRANGE', KEYS[1], -1, -1, 'WITHSCORES')
if top[2] and tonumber(top[2]) >= score then score = tonumber(top[2]) + 1 end
redis.call('ZADD', KEYS[1], score, ARGV[1])
return 1
