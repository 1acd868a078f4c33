-- This script indexes one post under one tag, in the tag's slot (or, for
-- an ONLY_TO post, in one reader's slot): ZADD of the post's member, the
-- index trimmed to its newest ARGV[3] entries, and, when the post counts
-- for trends (ARGV[4] == '1': a PUBLIC post), the author added to the
-- hour's HyperLogLog of users and the hour's use counter raised, both
-- expiring with the trend window.
--
-- One step, so a retried index write (the fan-out job runs again) counts
-- nothing twice: the counters move only when the ZADD added the member.
--
-- KEYS: the index (TagPosts or TagOnlyTo); when counting, TagUsers and
-- TagUses of the post's hour. ARGV: member, score (post id), cap,
-- count ('1' or '0'), author, TTL of the hour's counters (ms).

local added = redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
if added == 0 then return 0 end
local cap = tonumber(ARGV[3])
local n = redis.call('ZCARD', KEYS[1])
if n > cap then redis.call('ZREMRANGEBYRANK', KEYS[1], 0, n - cap - 1) end
if ARGV[4] == '1' then
  redis.call('PFADD', KEYS[2], ARGV[5])
  redis.call('PEXPIRE', KEYS[2], ARGV[6])
  redis.call('INCR', KEYS[3])
  redis.call('PEXPIRE', KEYS[3], ARGV[6])
end
return 1
