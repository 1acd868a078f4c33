-- This script is the last step of a registration, and of the repair of an
-- abandoned one, in the {acct} slot: it removes the pending entry of the id
-- and, when ARGV[2] is 'VOID' (the profile will never be written), the
-- name and e-mail claims the entry names, where they still point at the
-- id. Idempotent: a second run finds no entry and changes nothing.
--
-- KEYS: Names, Emails, RegPending. ARGV: id, 'DONE' or 'VOID'.

local pending = redis.call('HGET', KEYS[3], ARGV[1])
if not pending then return 'OK' end
if ARGV[2] == 'VOID' then
  local entry = cjson.decode(pending)
  if redis.call('HGET', KEYS[1], entry[2]) == ARGV[1] then redis.call('HDEL', KEYS[1], entry[2]) end
  if redis.call('HGET', KEYS[2], entry[3]) == ARGV[1] then redis.call('HDEL', KEYS[2], entry[3]) end
end
redis.call('HDEL', KEYS[3], ARGV[1])
return 'OK'
