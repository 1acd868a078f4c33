-- This script is the first step of a registration: in the {acct} slot it
-- claims the lower-cased name and e-mail for a fresh user id and records
-- the registration as pending (start time, name and e-mail, as JSON), all
-- or nothing, so concurrent registrations
-- of one name or one address leave exactly one claim. The profile is
-- written next in the user's own slot (register_profile.lua), and the
-- pending entry removed last (docs/data-model.md, "Cross-slot steps").
--
-- The user id (ARGV[3]) is fresh from INCR, so when both indexes already
-- point at it this is go-redis retrying a call whose reply was lost: the
-- script answers OK again instead of a conflict.
--
-- A claim held by a registration pending for longer than ARGV[5] ms is
-- answered STALE with its id, so the caller can finish or roll it back
-- (register_settle.lua) and try again.
--
-- KEYS: Names, Emails, RegPending. ARGV: name, e-mail, id, now (ms),
-- grace (ms).

local n = redis.call('HGET', KEYS[1], ARGV[1])
local e = redis.call('HGET', KEYS[2], ARGV[2])
if n or e then
  if n == ARGV[3] and e == ARGV[3] then return {'OK'} end
  for _, owner in ipairs({n or false, e or false}) do
    if owner then
      local pending = redis.call('HGET', KEYS[3], owner)
      if pending and cjson.decode(pending)[1] + tonumber(ARGV[5]) < tonumber(ARGV[4]) then
        return {'STALE', owner}
      end
    end
  end
  if n then return {'NAME'} end
  return {'EMAIL'}
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[2], ARGV[2], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[3], cjson.encode({tonumber(ARGV[4]), ARGV[1], ARGV[2]}))
return {'OK'}
