-- This script adds or removes one of a user's keyword filters, in the
-- user's slot, and first drops the filters that have expired (the lazy
-- clean-up: reads skip them already). Adding a filter with a fresh id
-- (INCR of FilterSeq) refuses past the cap of filters not expired; a retry
-- finds its own id written and answers the same.
--
-- KEYS: Filters. ARGV: 'add' or 'remove', filter id, the packed filter
-- (add), now (ms), the cap.
-- Reply: add: 1 done, 0 the cap is reached; remove: 1 removed, 0 no such
-- filter.

local now = tonumber(ARGV[4])
local all = redis.call('HGETALL', KEYS[1])
for i = 1, #all, 2 do
  local v = all[i + 1]
  local cut = string.find(v, '\31', 1, true)
  local fields = {}
  local from = 1
  while cut do
    fields[#fields + 1] = string.sub(v, from, cut - 1)
    from = cut + 1
    cut = string.find(v, '\31', from, true)
  end
  fields[#fields + 1] = string.sub(v, from)
  local expires = tonumber(fields[F.filter.expires])
  if expires and expires <= now then
    redis.call('HDEL', KEYS[1], all[i])
  end
end

if ARGV[1] == 'remove' then
  return redis.call('HDEL', KEYS[1], ARGV[2])
end
if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1 then return 1 end
if redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[5]) then return 0 end
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
return 1
