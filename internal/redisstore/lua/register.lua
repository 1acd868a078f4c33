-- This script claims the lower-cased name and e-mail and writes the user
-- hash in one atomic step, so concurrent registrations of one name or one
-- address leave exactly one account and nothing half-written.
--
-- The user id (ARGV[3]) is fresh from INCR, so when both indexes already
-- point at it this is go-redis retrying a call whose reply was lost: the
-- script answers OK again instead of CONFLICT.
--
-- Redis Cluster: the two indexes share the {acct} slot; the user hash lives
-- in its own user's slot, so under Cluster this step is split as described
-- in docs/data-model.md.

local n = redis.call('HGET', KEYS[1], ARGV[1])
local e = redis.call('HGET', KEYS[2], ARGV[2])
if n or e then
  if n == ARGV[3] and e == ARGV[3] then return 'OK' end
  if n then return 'NAME' end
  return 'EMAIL'
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[3], unpack(ARGV, 4))
return 'OK'
