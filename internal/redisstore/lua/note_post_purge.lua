-- This script takes out of a recipient's notifications every one about a
-- deleted post (likes, comments, reposts, mentions of it), so that the
-- unread count, which counts Notes, counts none the list no longer shows.
-- NoteData holds at most NOTIFY_CAP notifications: one step.
--
-- KEYS: Notes, NoteData, NoteOpen (all of the recipient).
-- ARGV: NoteActors prefix, the post's id.

local notes, data, open = KEYS[1], KEYS[2], KEYS[3]
local prefix, post = ARGV[1], ARGV[2]

local cursor, found = '0', {}
repeat
  local r = redis.call('HSCAN', data, cursor, 'COUNT', 200)
  cursor = r[1]
  for i = 1, #r[2], 2 do
    if note_split(r[2][i + 1])[F.note.post] == post then found[#found + 1] = r[2][i] end
  end
until cursor == '0'
for _, gid in ipairs(found) do note_drop(notes, data, open, prefix, gid) end
return #found
