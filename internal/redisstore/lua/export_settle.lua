-- This script ends a data export's job: READY with the archive's size and
-- the time it is served until, or FAILED; only the export the job was for
-- and only while it is PENDING, so a job run again after a newer request,
-- or after its export ended, changes nothing.
--
-- KEYS: the export record (Keys.Export).
-- ARGV: the export's id, the state, the archive's bytes, until (ms), the
-- record's TTL (ms).
-- Returns 1 when the record changed, 0 otherwise.

local r = redis.call('HMGET', KEYS[1], F.export.id, F.export.st)
if r[1] ~= ARGV[1] or r[2] ~= 'PENDING' then return 0 end
redis.call('HSET', KEYS[1], F.export.st, ARGV[2])
if ARGV[2] == 'READY' then
  redis.call('HSET', KEYS[1], F.export.bytes, ARGV[3], F.export.ends, ARGV[4])
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1
