-- This script makes an aggregated notification (the likes of one post, or
-- the follows of the recipient) reflect an actor's action, without
-- keeping the actor: its actors and their count are read from the source
-- (the post's likers, the recipient's followers, both scored by when each
-- acted) within the notification's window, when the notification is read.
-- A window is a range of those scores: [lo, hi), hi open-ended for the
-- group's newest window; the group's windows never overlap. What this
-- script decides is which window an action falls in and whether the
-- notification rises:
--
-- * within the open window (opened less than the window ago, by the
--   job's clock): it rises when the action's score is above the highest
--   that raised it (hwm), so a job run twice raises it once;
-- * after the open window has expired: a new window opens at the
--   action's score and the previous one ends there (hi);
-- * below the newest window's lo and above every other window's hi (jobs
--   run out of order): the window's lo moves down to it, and it rises;
-- * below that: it is counted in an older window already.
--
-- An absent action, or one by an actor the recipient blocked, who blocked
-- them, or whom they muted, changes nothing here: the read filters it,
-- and the caller checks whether a window is left without actors
-- (noteWindowsScript, noteDropScript).
--
-- KEYS: Notes, NoteData, NoteOpen, NoteMeta, Blocks, BlockedBy, Mutes (all
-- of the recipient).
-- ARGV: NoteActors prefix, group key, actor, present ("1"/"0"), the job's
-- time (ms), window (ms), kind, post, cap, live channel, publish command,
-- the action's score in the source ("" when absent).
--
-- Reply: {the activity number when the notification rose, else 0, 1 when
-- the caller must check the group's windows for one left without actors}.

local notes, data, open, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local prefix, group, actor = ARGV[1], ARGV[2], ARGV[3]
local at, window, cap = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[9])
local tx = tonumber(ARGV[12])
local wkey = 'w|' .. group

if ARGV[4] ~= '1' or not tx or redis.call('SISMEMBER', KEYS[5], actor) == 1
    or redis.call('SISMEMBER', KEYS[6], actor) == 1 or redis.call('SISMEMBER', KEYS[7], actor) == 1 then
  return {0, 1}
end

-- The open window (gid, its fields, when it opened), if any.
local gid, d, opened
local o = redis.call('HGET', open, group)
if o then
  local g, t = string.match(o, '^(%d+)|(%d+)$')
  local v = g and redis.call('HGET', data, g)
  if v then
    local f = note_split(v)
    if f[F.note.lo] and f[F.note.lo] ~= '' then gid, d, opened = g, f, tonumber(t) end
  end
end

-- floor: the highest end of the group's other windows.
local floor = nil
for x in string.gmatch(redis.call('HGET', open, wkey) or '', '%d+') do
  if x ~= gid then
    local v = redis.call('HGET', data, x)
    local hi = v and tonumber(note_split(v)[F.note.hi])
    if hi and (not floor or hi > floor) then floor = hi end
  end
end

local function rise(g, f)
  f[F.note.updated] = ARGV[5]
  local act = redis.call('HINCRBY', meta, 'act', 1)
  redis.call('ZADD', notes, act, g)
  redis.call('HSET', data, g, note_pack(f))
  while redis.call('ZCARD', notes) > cap do
    note_drop(notes, data, open, prefix, redis.call('ZRANGE', notes, 0, 0)[1])
  end
  redis.call(ARGV[11], ARGV[10], tostring(act))
  return act
end

if gid then
  local lo, hwm = tonumber(d[F.note.lo]), tonumber(d[F.note.hwm])
  if tx < lo then
    if floor and tx < floor then return {0, 0} end
    d[F.note.lo] = ARGV[12]
    return {rise(gid, d), 0}
  end
  if tx <= hwm then return {0, 0} end
  if at - opened < window then
    d[F.note.hwm] = ARGV[12]
    return {rise(gid, d), 0}
  end
  -- The open window has expired: it ends where the new one starts.
  d[F.note.hi] = ARGV[12]
  redis.call('HSET', data, gid, note_pack(d))
elseif floor and tx < floor then
  return {0, 0}
end

local g = tostring(redis.call('HINCRBY', meta, 'seq', 1))
redis.call('HSET', open, group, g .. '|' .. ARGV[5])
local w = redis.call('HGET', open, wkey)
redis.call('HSET', open, wkey, w and (g .. ' ' .. w) or g)
local act = rise(g, {[F.note.kind] = ARGV[7], [F.note.post] = ARGV[8], [F.note.comment] = '', [F.note.updated] = ARGV[5],
  [F.note.group] = group, [F.note.lo] = ARGV[12], [F.note.hi] = '', [F.note.hwm] = ARGV[12]})
return {act, gid and 1 or 0}
