-- This script takes users out of the owner's lists, in the owner's slot:
-- deleting a list (ARGV[2] = list id: the list, its members and its feed
-- go; its members are answered, whose ListedIn entries the caller
-- removes), or an unfollow (ARGV[2] = '', ARGV[3] = the user no longer
-- followed: the user leaves every list of the owner, with their feed
-- entries; the lists that held them are answered). Re-running either
-- changes nothing more.
--
-- KEYS: Lists. ARGV: the ListMembers prefix, list id or '', the user,
-- the ListFeed prefix.

if ARGV[2] ~= '' then
  if redis.call('HEXISTS', KEYS[1], ARGV[2]) == 0 then return false end
  local members = redis.call('ZRANGE', ARGV[1] .. ARGV[2], 0, -1)
  redis.call('DEL', ARGV[1] .. ARGV[2], ARGV[4] .. ARGV[2])
  redis.call('HDEL', KEYS[1], ARGV[2])
  return members
end
local held = {}
local suffix = ':' .. ARGV[3]
for _, lid in ipairs(redis.call('HKEYS', KEYS[1])) do
  if redis.call('ZREM', ARGV[1] .. lid, ARGV[3]) == 1 then held[#held + 1] = lid end
  local feed = ARGV[4] .. lid
  local drop = {}
  for _, e in ipairs(redis.call('ZRANGE', feed, 0, -1)) do
    if string.sub(e, -#suffix) == suffix then drop[#drop + 1] = e end
  end
  for i = 1, #drop, 1000 do
    redis.call('ZREM', feed, unpack(drop, i, math.min(i + 999, #drop)))
  end
end
return held
