-- This script changes the members of one of the owner's lists, in the
-- owner's slot, all or nothing.
--
-- add: every user must be one the owner follows (Following), and the list
-- must hold at most the cap afterwards; then the users join ListMembers
-- (ZADD NX: one added before keeps its time) and the entries given (the
-- newest posts of the users, "<post>:<author>" scored by the post id)
-- join ListFeed, trimmed to its cap. A retry adds nothing new.
-- remove: the users leave ListMembers, and their entries ListFeed.
--
-- KEYS: Lists, ListMembers, ListFeed, Following.
-- ARGV: list id, 'add' or 'remove', now (ms), members cap, feed cap, the
-- number of users n, the n users, then score, entry pairs (add).
-- Reply: {'ok', members after}, {'nolist'}, {'notfollowed', user} or
-- {'toomany', members before, new users}.

local known = redis.call('HEXISTS', KEYS[1], ARGV[1])
if known == 0 then return {'nolist'} end
local n = tonumber(ARGV[6])
if ARGV[2] == 'remove' then
  local gone = {}
  for i = 7, 6 + n do
    redis.call('ZREM', KEYS[2], ARGV[i])
    gone[ARGV[i]] = true
  end
  local drop = {}
  for _, e in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
    local a = string.match(e, ':(%d+)$')
    if gone[a] then drop[#drop + 1] = e end
  end
  for i = 1, #drop, 1000 do
    redis.call('ZREM', KEYS[3], unpack(drop, i, math.min(i + 999, #drop)))
  end
  return {'ok', redis.call('ZCARD', KEYS[2])}
end
local fresh = 0
for i = 7, 6 + n do
  if not redis.call('ZSCORE', KEYS[4], ARGV[i]) then return {'notfollowed', ARGV[i]} end
  if not redis.call('ZSCORE', KEYS[2], ARGV[i]) then fresh = fresh + 1 end
end
local have = redis.call('ZCARD', KEYS[2])
if have + fresh > tonumber(ARGV[4]) then return {'toomany', have, fresh} end
for i = 7, 6 + n do
  redis.call('ZADD', KEYS[2], 'NX', ARGV[3], ARGV[i])
end
for i = 7 + n, #ARGV, 2 do
  redis.call('ZADD', KEYS[3], ARGV[i], ARGV[i + 1])
end
local cap = tonumber(ARGV[5])
if redis.call('ZCARD', KEYS[3]) > cap then
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, -cap - 1)
end
return {'ok', redis.call('ZCARD', KEYS[2])}
