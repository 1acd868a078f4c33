-- Viewer flags (PostViewers): one field per user holding flag letters
-- (l likes, r plain repost, a audience). set_flag turns letter f of user
-- u on (on true) or off in the hash h; a user left with no letter has no
-- field.
local function set_flag(h, u, f, on)
  local cur = redis.call('HGET', h, u) or ''
  local has = string.find(cur, f, 1, true) ~= nil
  if on and not has then
    redis.call('HSET', h, u, cur .. f)
  elseif not on and has then
    cur = (string.gsub(cur, f, ''))
    if cur == '' then redis.call('HDEL', h, u) else redis.call('HSET', h, u, cur) end
  end
end
-- set_flags writes users' flags into h: fv is a list of user, letters
-- pairs, written a thousand arguments to an HSET.
local function set_flags(h, fv)
  for i = 1, #fv, 1000 do
    redis.call('HSET', h, unpack(fv, i, math.min(i + 999, #fv)))
  end
end
