-- This script files a report in one step: a second report of the same
-- target by the same reporter while the first is open answers the first,
-- and a reporter with as many open reports as the cap gets CAP; else it
-- takes an id, writes the hash, queues the id (oldest first) and counts
-- the report against its reporter. All keys share the {mod} slot.
--
-- KEYS: ReportSeq, ReportsOpen, ReportDedupe, ReportsOpenBy. ARGV: the
-- Report key prefix (the key without the id), the dedupe field
-- ("<reporter>:<kind>:<target>"), the reporter, the cap of open reports,
-- then the hash's fields and values. Returns {id, 1} for a new report,
-- {id, 0} for the open one already there, or CAP.

local prefix, dk, reporter, cap = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local earlier = redis.call('HGET', KEYS[3], dk)
if earlier and redis.call('EXISTS', prefix .. earlier) == 1 then return {earlier, 0} end
if tonumber(redis.call('HGET', KEYS[4], reporter) or '0') >= cap then return 'CAP' end
local id = tostring(redis.call('INCR', KEYS[1]))
redis.call('HSET', prefix .. id, unpack(ARGV, 5))
redis.call('ZADD', KEYS[2], id, id)
redis.call('HSET', KEYS[3], dk, id)
redis.call('HINCRBY', KEYS[4], reporter, 1)
return {id, 1}
