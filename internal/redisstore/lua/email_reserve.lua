-- This script reserves an address for a pending e-mail change, in the
-- {acct} slot: the address maps to "~<id>" in the e-mail index, so a
-- registration or another change finds it taken, while a login by it finds
-- no account. A user has at most one reservation: the previous one is
-- released. Atomic, so two users asking for one address get one answer
-- each, and only one of them the address.
--
-- KEYS: Emails, EmailPending. ARGV: user id, lower-cased address, expiry
-- (ms).
-- Returns OK, OWN (the user's own address already) or TAKEN.

local mark = '~' .. ARGV[1]
local owner = redis.call('HGET', KEYS[1], ARGV[2])
if owner and owner ~= mark then
  if owner == ARGV[1] then return 'OWN' end
  return 'TAKEN'
end
local prev = redis.call('HGET', KEYS[2], ARGV[1])
if prev then
  local p = cjson.decode(prev)
  if p[1] ~= ARGV[2] and redis.call('HGET', KEYS[1], p[1]) == mark then
    redis.call('HDEL', KEYS[1], p[1])
  end
end
redis.call('HSET', KEYS[1], ARGV[2], mark)
redis.call('HSET', KEYS[2], ARGV[1], cjson.encode({ARGV[2], tonumber(ARGV[3])}))
return 'OK'
