-- This script delivers a new post into one list's feed, in the owner's
-- slot, when its author is still a member (ListedIn, which fan-out reads,
-- may name a list the author has left). ZADD of a fixed score and member
-- makes a second delivery a no-op; the feed is trimmed to its cap.
--
-- KEYS: ListMembers, ListFeed. ARGV: author, post id, entry, the cap.
-- Reply: 1 delivered (or already there), 0 not a member.

if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[2], ARGV[2], ARGV[3])
local cap = tonumber(ARGV[4])
if redis.call('ZCARD', KEYS[2]) > cap then
  redis.call('ZREMRANGEBYRANK', KEYS[2], 0, -cap - 1)
end
return 1
