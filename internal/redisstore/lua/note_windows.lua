-- This script reads a recipient's aggregated notifications (note_agg.lua)
-- of some groups, or of every group, with the users whose actions the
-- recipient is not told of: what the caller needs to count each window's
-- actors in its source and drop those left without any
-- (noteDropScript).
--
-- KEYS: Notes, NoteData, NoteOpen, Blocks, BlockedBy, Mutes (all of the
-- recipient).
-- ARGV: how many of each of the last three sets to read, then the group
-- keys (none: every group with windows).
--
-- Reply: {excluded users, rows}, rows a flat list of, per window: its id,
-- its activity number, its NoteData value.

local notes, data, open = KEYS[1], KEYS[2], KEYS[3]
local fields = {}
if #ARGV > 1 then
  for i = 2, #ARGV do fields[#fields + 1] = 'w|' .. ARGV[i] end
else
  local cursor = '0'
  repeat
    local r = redis.call('HSCAN', open, cursor, 'MATCH', 'w|*', 'COUNT', 200)
    cursor = r[1]
    for i = 1, #r[2], 2 do fields[#fields + 1] = r[2][i] end
  until cursor == '0'
end
local rows = {}
for _, f in ipairs(fields) do
  for gid in string.gmatch(redis.call('HGET', open, f) or '', '%d+') do
    local act = redis.call('ZSCORE', notes, gid)
    local d = redis.call('HGET', data, gid)
    if act and d then
      rows[#rows + 1] = gid
      rows[#rows + 1] = act
      rows[#rows + 1] = d
    end
  end
end
local excluded = note_excluded(KEYS[4], KEYS[5], KEYS[6], tonumber(ARGV[1]))
return {excluded, rows}
