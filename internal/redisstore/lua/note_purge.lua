-- This script takes one actor out of every notification of a recipient:
-- after a block (either way) or a mute, nothing the actor did shows in
-- the recipient's notifications, and one left without actors goes.
--
-- KEYS: Notes, NoteData, NoteOpen (all of the recipient).
-- ARGV: NoteActors prefix, the actor.

local notes, data, open = KEYS[1], KEYS[2], KEYS[3]
local prefix, actor = ARGV[1], ARGV[2]


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
  if redis.call('ZCARD', prefix .. f[2]) == 0 then note_drop(notes, data, open, prefix, f[2]) end
end
return #found
