-- This script writes a list of the owner, or renames one, in the owner's
-- slot. Creating a list with a fresh id (INCR of ListSeq) refuses past the
-- cap; a retry finds its own id written and answers the same. Renaming
-- writes only a list that exists.
--
-- KEYS: Lists. ARGV: list id, title, 'create' or 'rename', the cap.
-- Reply: 1 done, 0 the cap is reached (create) or no such list (rename).

local exists = redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1
if ARGV[3] == 'rename' then
  if not exists then return 0 end
elseif not exists and redis.call('HLEN', KEYS[1]) >= tonumber(ARGV[4]) then
  return 0
end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
