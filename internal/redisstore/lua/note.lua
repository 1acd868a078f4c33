-- This script makes one of a recipient's notifications reflect whether an
-- actor's action stands: present adds the actor to the group's open
-- notification (a new one when none is open, or the open one is older than
-- the window), raising it to the top with a new activity number; absent
-- takes the actor out, and the notification goes with its last actor.
-- Both are idempotent, so a job run twice, or jobs run out of order with
-- the truth read each time, leave the same state. An actor the recipient
-- blocked, who blocked the recipient, or whom the recipient muted, adds
-- nothing.
--
-- KEYS: Notes, NoteData, NoteOpen, NoteMeta, Blocks, BlockedBy, Mutes (all
-- of the recipient).
-- ARGV: NoteActors prefix, group key, actor, present ("1"/"0"), now (ms),
-- window (ms), kind, post, comment, cap, live channel, publish command,
-- and the post's author for a mention ("" otherwise): a mention on the
-- post of someone in a block with the recipient adds nothing either.
--
-- Reply: the activity number when the notification rose, else 0.

local notes, data, open, meta = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local prefix, group, actor = ARGV[1], ARGV[2], ARGV[3]
local now, window, cap = tonumber(ARGV[5]), tonumber(ARGV[6]), tonumber(ARGV[10])
local of = 'a|' .. group .. '|' .. actor


local present = ARGV[4] == '1'
if present and (redis.call('SISMEMBER', KEYS[5], actor) == 1 or redis.call('SISMEMBER', KEYS[6], actor) == 1
    or redis.call('SISMEMBER', KEYS[7], actor) == 1) then
  present = false
end
local owner = ARGV[13] or ''
if present and owner ~= '' and (redis.call('SISMEMBER', KEYS[5], owner) == 1 or redis.call('SISMEMBER', KEYS[6], owner) == 1) then
  present = false
end

if not present then
  local gid = redis.call('HGET', open, of)
  if not gid then return 0 end
  redis.call('HDEL', open, of)
  redis.call('ZREM', prefix .. gid, actor)
  if redis.call('ZCARD', prefix .. gid) == 0 then note_drop(notes, data, open, prefix, gid) end
  return 0
end

local held = redis.call('HGET', open, of)
if held and redis.call('HEXISTS', data, held) == 1 then return 0 end

local gid
local o = redis.call('HGET', open, group)
if o then
  local g, opened = string.match(o, '^(%d+)|(%d+)$')
  if g and now - tonumber(opened) < window and redis.call('HEXISTS', data, g) == 1 then gid = g end
end
if not gid then
  gid = tostring(redis.call('HINCRBY', meta, 'seq', 1))
  redis.call('HSET', open, group, gid .. '|' .. ARGV[5])
end
redis.call('ZADD', prefix .. gid, ARGV[5], actor)
redis.call('HSET', open, of, gid)
local act = redis.call('HINCRBY', meta, 'act', 1)
redis.call('ZADD', notes, act, gid)
redis.call('HSET', data, gid, note_pack({[F.note.kind] = ARGV[7], [F.note.post] = ARGV[8], [F.note.comment] = ARGV[9],
  [F.note.updated] = ARGV[5], [F.note.group] = group}))
while redis.call('ZCARD', notes) > cap do
  note_drop(notes, data, open, prefix, redis.call('ZRANGE', notes, 0, 0)[1])
end
redis.call(ARGV[12], ARGV[11], tostring(act))
return act
