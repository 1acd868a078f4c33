-- This script takes one actor out of every notification of a recipient:
-- after a block (either way) or a mute, nothing the actor did shows in
-- the recipient's notifications, and one left without actors goes.
--
-- KEYS: Notes, NoteData, NoteOpen (all of the recipient).
-- ARGV: NoteActors prefix, the actor.

local notes, data, open = KEYS[1], KEYS[2], KEYS[3]
local prefix, actor = ARGV[1], ARGV[2]

local function drop(gid)
  local d = redis.call('HGET', data, gid)
  if d then
    local g = string.match(d, '^[^|]*|[^|]*|[^|]*|[^|]*|(.*)$')
    for _, a in ipairs(redis.call('ZRANGE', prefix .. gid, 0, -1)) do
      redis.call('HDEL', open, 'a|' .. g .. '|' .. a)
    end
    local o = redis.call('HGET', open, g)
    if o and string.match(o, '^(%d+)') == gid then redis.call('HDEL', open, g) end
  end
  redis.call('ZREM', notes, gid)
  redis.call('HDEL', data, gid)
  redis.call('DEL', prefix .. gid)
end

local cursor, found = '0', {}
repeat
  local r = redis.call('HSCAN', open, cursor, 'MATCH', 'a|*|' .. actor, 'COUNT', 200)
  cursor = r[1]
  for i = 1, #r[2], 2 do
    local field = r[2][i]
    if string.sub(field, -(#actor + 1)) == '|' .. actor then found[#found + 1] = {field, r[2][i + 1]} end
  end
until cursor == '0'
for _, f in ipairs(found) do
  redis.call('HDEL', open, f[1])
  redis.call('ZREM', prefix .. f[2], actor)
  if redis.call('ZCARD', prefix .. f[2]) == 0 then drop(f[2]) end
end
return #found
