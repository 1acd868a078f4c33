-- This script hides a deleted account at once, in the user's slot: it
-- renames the profile hash (User) to the purge record (Gone), so that no
-- read, login or access token finds the user any more (and the gateways'
-- profile caches hear of the write), and stamps when. Idempotent: a
-- second run finds no profile and answers whether the record is there.
--
-- KEYS: User, Gone. ARGV: the record's time field, now (ms).
-- Answers 1 (hidden now), 2 (hidden before), 0 (no such account).

if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('RENAME', KEYS[1], KEYS[2])
  redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
  return 1
end
if redis.call('EXISTS', KEYS[2]) == 1 then return 2 end
return 0
