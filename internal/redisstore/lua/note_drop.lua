-- This script drops aggregated notifications found without actors, each
-- only if it has not risen since it was read (its activity number is the
-- one read): a notification that rose in between has an actor the count
-- did not see.
--
-- KEYS: Notes, NoteData, NoteOpen (all of the recipient).
-- ARGV: NoteActors prefix, then pairs of a notification's id and the
-- activity number read with it.
-- Reply: how many were dropped.

local notes, data, open = KEYS[1], KEYS[2], KEYS[3]
local n = 0
for i = 2, #ARGV, 2 do
  local act = redis.call('ZSCORE', notes, ARGV[i])
  if act and tonumber(act) == tonumber(ARGV[i + 1]) then
    note_drop(notes, data, open, ARGV[1], ARGV[i])
    n = n + 1
  end
end
return n
