-- Notifications: a recipient's keys (see notes.go).

-- note_drop removes a notification with its actors and its entries in
-- NoteOpen (the group, when it still points at it, and each actor's).
local function note_drop(notes, data, open, prefix, gid)
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
