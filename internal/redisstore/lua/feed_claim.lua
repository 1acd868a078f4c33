-- This script records the timeline settings every gateway and worker of a
-- deployment must share, or compares them with those recorded, in one
-- step: the first process to start records them, and the others learn
-- what differs before they serve.
--
-- KEYS: FeedSettings. ARGV: reclaim ("1": record these whatever is there),
-- then field/value pairs.
-- Reply: a flat list of field, recorded value, this process's value, for
-- each setting that differs (empty when they agree or were recorded now).

if ARGV[1] == '1' or redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('DEL', KEYS[1])
  redis.call('HSET', KEYS[1], unpack(ARGV, 2))
  return {}
end
local out = {}
for i = 2, #ARGV, 2 do
  local cur = redis.call('HGET', KEYS[1], ARGV[i])
  if cur ~= ARGV[i + 1] then
    out[#out + 1] = ARGV[i]
    out[#out + 1] = cur or '(not recorded)'
    out[#out + 1] = ARGV[i + 1]
  end
end
return out
