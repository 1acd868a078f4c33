-- This script settles an address in the {acct} slot, one of three ways
-- (ARGV[3]):
--   claim:   a reserved address (or one the user already owns) becomes the
--            user's, and its reservation ends; 0 when it is neither (the
--            reservation ended and someone else took the address).
--   release: an address the user owns is freed (the old address once a
--            change is confirmed); 0 when the user does not own it.
--   expire:  the user's reservation ends and its address is freed, when
--            it expired before ARGV[4] (ms), or whatever its expiry when
--            ARGV[4] is 'any' (the account's clean-up).
-- Each is idempotent: go-redis retrying it, or a retried confirmation,
-- finds the work done.
--
-- KEYS: Emails, EmailPending. ARGV: user id, lower-cased address ('' for
-- expire), mode, and for expire the time (ms) or 'any'.

local mark = '~' .. ARGV[1]
if ARGV[3] == 'claim' then
  local owner = redis.call('HGET', KEYS[1], ARGV[2])
  if owner ~= mark and owner ~= ARGV[1] then return 0 end
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[1])
  local prev = redis.call('HGET', KEYS[2], ARGV[1])
  if prev and cjson.decode(prev)[1] == ARGV[2] then redis.call('HDEL', KEYS[2], ARGV[1]) end
  return 1
elseif ARGV[3] == 'release' then
  if redis.call('HGET', KEYS[1], ARGV[2]) ~= ARGV[1] then return 0 end
  redis.call('HDEL', KEYS[1], ARGV[2])
  return 1
end
local prev = redis.call('HGET', KEYS[2], ARGV[1])
if not prev then return 0 end
local p = cjson.decode(prev)
if ARGV[4] ~= 'any' and p[2] > tonumber(ARGV[4]) then return 0 end
if redis.call('HGET', KEYS[1], p[1]) == mark then redis.call('HDEL', KEYS[1], p[1]) end
redis.call('HDEL', KEYS[2], ARGV[1])
return 1
