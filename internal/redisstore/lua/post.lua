-- This script writes a post's audience set and hash in one step, and the
-- audience's a flags in PostViewers (lib/flags.lua; the hash's pv field
-- says PostViewers is kept for the post).
--
-- KEYS: Post, the audience set (PostOnlyTo or PostNotTo), PostViewers.
-- ARGV: the number n of hash field/value arguments that follow, the fields
-- and values, then the audience members.

local n = tonumber(ARGV[1])
if redis.call('EXISTS', KEYS[1]) == 1 then return 'OK' end
if #ARGV > n + 1 then
  redis.call('SADD', KEYS[2], unpack(ARGV, n + 2))
  local fv = {}
  for i = n + 2, #ARGV do
    fv[#fv + 1] = ARGV[i]
    fv[#fv + 1] = 'a'
  end
  set_flags(KEYS[3], fv)
end
redis.call('HSET', KEYS[1], unpack(ARGV, 2, n + 1))
return 'OK'
