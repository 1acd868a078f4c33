-- This script starts a user's data export: it checks the one-at-a-time
-- and one-a-day rules against the user's latest export and writes the
-- new one, PENDING, in their place, in one step in the user's slot, so
-- that two requests at once make one export.
--
-- KEYS: the export record (Keys.Export).
-- ARGV: the new export's id, now (ms), the least time between two
-- exports (ms), how long a PENDING export may stay so before it counts as
-- failed (ms), the record's TTL (ms).
-- Returns 'OK' when the export was written, 'BUSY' when one is being
-- prepared, 'DAY' when the latest was asked for less than a day ago.

local r = redis.call('HMGET', KEYS[1], F.export.st, F.export.created)
local now = tonumber(ARGV[2])
if r[1] then
  local age = now - tonumber(r[2])
  if r[1] == 'PENDING' and age < tonumber(ARGV[4]) then return 'BUSY' end
  if r[1] == 'READY' and age < tonumber(ARGV[3]) then return 'DAY' end
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], F.export.id, ARGV[1], F.export.created, ARGV[2], F.export.st, 'PENDING')
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 'OK'
