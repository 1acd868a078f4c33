-- This script closes an open report in one step: it records the
-- moderator's action, moves the id from the open queue to the resolved
-- one, frees the reporter's dedupe entry and open count, and drops the
-- oldest resolved reports past the bound, hashes included. All keys
-- share the {mod} slot.
--
-- KEYS: Report(id), ReportsOpen, ReportsResolved, ReportDedupe,
-- ReportsOpenBy. ARGV: the id, the action, the moderator's id, the time
-- (ms), the resolved reports kept, the Report key prefix. Returns OK,
-- GONE (no such report) or DONE (already resolved: nothing changes).

local id = ARGV[1]
local r = redis.call('HMGET', KEYS[1], F.report.reporter, F.report.kind, F.report.target, F.report.status)
if not r[1] then return 'GONE' end
if r[4] == 'RESOLVED' then return 'DONE' end
redis.call('HSET', KEYS[1], F.report.status, 'RESOLVED', F.report.action, ARGV[2], F.report.mod, ARGV[3],
  F.report.resolved, ARGV[4])
redis.call('ZREM', KEYS[2], id)
redis.call('ZADD', KEYS[3], id, id)
local dk = r[1] .. ':' .. r[2] .. ':' .. r[3]
if redis.call('HGET', KEYS[4], dk) == id then redis.call('HDEL', KEYS[4], dk) end
if redis.call('HINCRBY', KEYS[5], r[1], -1) <= 0 then redis.call('HDEL', KEYS[5], r[1]) end
local extra = redis.call('ZCARD', KEYS[3]) - tonumber(ARGV[5])
if extra > 0 then
  for _, old in ipairs(redis.call('ZRANGE', KEYS[3], 0, extra - 1)) do
    redis.call('DEL', ARGV[6] .. old)
  end
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, extra - 1)
end
return 'OK'
