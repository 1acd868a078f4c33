-- This script marks a recipient's notifications read up to an activity
-- number (every one when it is ""): the mark only moves up, so marking an
-- older one again unreads nothing. Idempotent.
--
-- KEYS: Notes, NoteMeta. ARGV: the activity number, or "".
-- Reply: the unread count after.

local read = tonumber(redis.call('HGET', KEYS[2], 'read') or '0')
local top = tonumber(redis.call('HGET', KEYS[2], 'act') or '0')
local upto = top
if ARGV[1] ~= '' then upto = math.min(tonumber(ARGV[1]), top) end
if upto > read then
  read = upto
  redis.call('HSET', KEYS[2], 'read', read)
end
return redis.call('ZCOUNT', KEYS[1], '(' .. read, '+inf')
