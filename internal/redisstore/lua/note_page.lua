-- This script reads a page of a recipient's notifications with their
-- first actors, and the read state, in one step. An aggregated
-- notification (note_agg.lua) keeps no actors: the caller reads them from
-- their source, without the users this returns as excluded.
--
-- KEYS: Notes, NoteData, NoteMeta, Blocks, BlockedBy, Mutes.
-- ARGV: NoteActors prefix, cursor (an activity number, exclusive; "" =
-- none), n, actors per notification, newer ("1": the notifications raised
-- after the cursor, oldest first, for live streams; else those before it,
-- newest first), how many of each of Blocks, BlockedBy and Mutes to read.
--
-- Reply: {read, unread, rows, excluded users, 1 when a set held more than
-- were read}, rows a flat list of, per notification: its
-- activity number, its NoteData value, its actor count, and its first
-- actors (newest first) as one list.

local read = redis.call('HGET', KEYS[3], 'read') or '0'
local unread = redis.call('ZCOUNT', KEYS[1], '(' .. read, '+inf')
local rows
if ARGV[5] == '1' then
  rows = redis.call('ZRANGEBYSCORE', KEYS[1], '(' .. (ARGV[2] == '' and '0' or ARGV[2]), '+inf',
    'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
else
  rows = redis.call('ZREVRANGEBYSCORE', KEYS[1], ARGV[2] == '' and '+inf' or '(' .. ARGV[2], '-inf',
    'WITHSCORES', 'LIMIT', 0, tonumber(ARGV[3]))
end
local k = tonumber(ARGV[4])
local out = {}
for i = 1, #rows, 2 do
  local gid = rows[i]
  local key = ARGV[1] .. gid
  out[#out + 1] = rows[i + 1]
  out[#out + 1] = redis.call('HGET', KEYS[2], gid) or ''
  out[#out + 1] = redis.call('ZCARD', key)
  out[#out + 1] = k > 0 and redis.call('ZREVRANGE', key, 0, k - 1) or {}
end
local excluded, more = note_excluded(KEYS[4], KEYS[5], KEYS[6], tonumber(ARGV[6]))
return {read, unread, out, excluded, more}
