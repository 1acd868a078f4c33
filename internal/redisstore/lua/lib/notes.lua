-- Notifications: a recipient's keys (see notes.go).

-- note_split splits a NoteData value at '|' (empty fields kept).
local function note_split(s)
  local out, i = {}, 1
  while true do
    local j = string.find(s, '|', i, true)
    if not j then
      out[#out + 1] = string.sub(s, i)
      return out
    end
    out[#out + 1] = string.sub(s, i, j - 1)
    i = j + 1
  end
end

-- note_pack joins a notification's fields, a table from their positions
-- (F.note) to their values, into its NoteData value: in order, up to the
-- last field given, one not given before it empty.
local function note_pack(f)
  local n = 0
  for i in pairs(f) do
    if i > n then n = i end
  end
  local out = {}
  for i = 1, n do out[i] = f[i] or '' end
  return table.concat(out, '|')
end

-- note_drop removes a notification with its actors and its entries in
-- NoteOpen (the group, when it still points at it, each actor's, and its
-- place in the group's windows).
local function note_drop(notes, data, open, prefix, gid)
  local d = redis.call('HGET', data, gid)
  if d then
    local g = note_split(d)[F.note.group] or ''
    for _, a in ipairs(redis.call('ZRANGE', prefix .. gid, 0, -1)) do
      redis.call('HDEL', open, 'a|' .. g .. '|' .. a)
    end
    local o = redis.call('HGET', open, g)
    if o and string.match(o, '^(%d+)') == gid then redis.call('HDEL', open, g) end
    local w = redis.call('HGET', open, 'w|' .. g)
    if w then
      local left = {}
      for x in string.gmatch(w, '%d+') do
        if x ~= gid then left[#left + 1] = x end
      end
      if #left == 0 then
        redis.call('HDEL', open, 'w|' .. g)
      else
        redis.call('HSET', open, 'w|' .. g, table.concat(left, ' '))
      end
    end
  end
  redis.call('ZREM', notes, gid)
  redis.call('HDEL', data, gid)
  redis.call('DEL', prefix .. gid)
end

-- note_excluded lists the users whose actions the recipient is not told
-- of: those they blocked, who blocked them, and whom they muted, up to
-- cap of each set (SRANDMEMBER with a count larger than the set returns
-- it whole); and 1 when a set holds more, else 0.
local function note_excluded(blocks, blockedby, mutes, cap)
  local out, more = {}, 0
  for _, key in ipairs({blocks, blockedby, mutes}) do
    for _, u in ipairs(redis.call('SRANDMEMBER', key, cap)) do out[#out + 1] = u end
    if redis.call('SCARD', key) > cap then more = 1 end
  end
  return out, more
end
