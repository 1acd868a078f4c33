-- This script builds a post's PostViewers from what its flags mirror —
-- Likers (l), PostPlainReposts (r), PostOnlyTo and PostNotTo (a) — for a
-- post written before PostViewers existed, marks the hash with pv = 1,
-- from which on the writers keep it (like.lua, repost_claim.lua,
-- repost_unlink.lua), and answers the viewer's flags. A post marked
-- already only answers them; a post that does not exist answers '' and
-- is not written. It reads every like of the post, once per post.
--
-- KEYS: Post, Likers, PostPlainReposts, PostOnlyTo, PostNotTo,
-- PostViewers (the post's {p<id>} slot). ARGV: the viewer.

if redis.call('EXISTS', KEYS[1]) == 0 then return '' end
if not redis.call('HGET', KEYS[1], F.post.pv) then
  redis.call('DEL', KEYS[6])
  local flags, users = {}, {}
  local function add(u, f)
    local cur = flags[u]
    if not cur then
      users[#users + 1] = u
      cur = ''
    end
    if not string.find(cur, f, 1, true) then flags[u] = cur .. f end
  end
  for _, u in ipairs(redis.call('ZRANGE', KEYS[2], 0, -1)) do add(u, 'l') end
  for _, u in ipairs(redis.call('HKEYS', KEYS[3])) do add(u, 'r') end
  for _, u in ipairs(redis.call('SMEMBERS', KEYS[4])) do add(u, 'a') end
  for _, u in ipairs(redis.call('SMEMBERS', KEYS[5])) do add(u, 'a') end
  local fv = {}
  for _, u in ipairs(users) do
    fv[#fv + 1] = u
    fv[#fv + 1] = flags[u]
  end
  set_flags(KEYS[6], fv)
  redis.call('HSET', KEYS[1], F.post.pv, '1')
end
return redis.call('HGET', KEYS[6], ARGV[1]) or ''
