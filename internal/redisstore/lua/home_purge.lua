-- This script removes an author's entries from a reader's home list,
-- and the author from the reader's pulled authors, unless the reader (again)
-- follows the author without muting them: a hook that runs late, after a
-- new follow, then removes nothing. Idempotent. The list keeps its TTL:
-- the purge may be another user's doing (a block), not the reader's
-- activity.
--
-- KEYS: Home, HomeMark, Following, Mutes, CelebFollowing. ARGV: reader,
-- author.

if allowed(ARGV[2]) then return 0 end
if redis.call('ZSCORE', KEYS[3], ARGV[2]) == false then redis.call('SREM', KEYS[5], ARGV[2]) end
local keep, removed = {}, 0
for _, e in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do
  if entry_author(e) == ARGV[2] then removed = removed + 1 else keep[#keep + 1] = e end
end
if removed == 0 then return 0 end
local ttl = redis.call('PTTL', KEYS[1])
redis.call('DEL', KEYS[1])
for i = 1, #keep, 500 do redis.call('RPUSH', KEYS[1], unpack(keep, i, math.min(i + 499, #keep))) end
if #keep > 0 and ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
return removed
