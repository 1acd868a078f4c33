-- This script is one user's side of a social-graph edit, which touches two
-- users and so two hash slots: graph.go runs the actor's side (begin), the
-- other user's side, then the actor's side again (end), each one atomic
-- step in one slot (docs/data-model.md, "Cross-slot steps").
--
-- KEYS[1], KEYS[2]: sets that must not hold ARGV[2] (the blocks standing
-- either way, for a follow); KEYS[3]: the actor's GraphPending;
-- KEYS[4..]: the keys to edit, one edit each.
--
-- ARGV[1]: 'begin', 'end' or 'side'. ARGV[2]: the member the guard sets
-- must not hold, '' for no check. ARGV[3]: the pending field: the other
-- user's id, prefixed "mute:" for a mute or unmute (graph.go). ARGV[4]:
-- this edit's pending value ('<op>:<ms>').
-- ARGV[5]: now (ms); ARGV[6]: grace (ms). ARGV[7..]: per key to edit, a
-- command (ZADD, ZREM, SADD, SREM, chosen by the Go code, never by a
-- client), a member and a score ('' for set commands).
--
-- begin: an unfinished edit of the same pair younger than the grace is
-- still running, so the answer is BUSY and nothing changes (edits of one
-- pair by one actor run one at a time); an older one was abandoned and is
-- taken over. The pending entry is written with the edits, and the
-- actor's other abandoned entries are returned for the caller to finish.
-- end: the pending entry goes, if it is still this edit's.
--
-- Reply: {status, score of the first ZADD member after the edits or '',
-- abandoned field, value, ...}; status is OK, FORBIDDEN or BUSY. A guard
-- that fails writes nothing but the removal of an abandoned entry of the
-- pair. Every edit is idempotent (ZADD NX keeps the
-- first follow time), so a retry changes nothing more.

local mode, now, grace = ARGV[1], tonumber(ARGV[5]), tonumber(ARGV[6])
local function started(v) return tonumber(string.match(v, ':(%d+)$')) end

local held = false
if mode == 'begin' then held = redis.call('HGET', KEYS[3], ARGV[3]) end
if ARGV[2] ~= '' and (redis.call('SISMEMBER', KEYS[1], ARGV[2]) == 1 or redis.call('SISMEMBER', KEYS[2], ARGV[2]) == 1) then
  -- An abandoned edit of the pair is settled by the refusal: the block
  -- that stands removed whatever edges it had written.
  if held and started(held) + grace <= now then redis.call('HDEL', KEYS[3], ARGV[3]) end
  return {'FORBIDDEN', ''}
end
if held and held ~= ARGV[4] and started(held) + grace > now then return {'BUSY', ''} end

local score = ''
for i = 4, #KEYS do
  local cmd, member, sc = ARGV[3 * i - 5], ARGV[3 * i - 4], ARGV[3 * i - 3]
  if cmd == 'ZADD' then
    redis.call('ZADD', KEYS[i], 'NX', sc, member)
    if score == '' then score = redis.call('ZSCORE', KEYS[i], member) end
  else
    redis.call(cmd, KEYS[i], member)
  end
end

local reply = {'OK', score}
if mode == 'begin' then
  redis.call('HSET', KEYS[3], ARGV[3], ARGV[4])
  local all = redis.call('HGETALL', KEYS[3])
  for i = 1, #all, 2 do
    if all[i] ~= ARGV[3] and started(all[i + 1]) + grace <= now then
      table.insert(reply, all[i])
      table.insert(reply, all[i + 1])
    end
  end
elseif mode == 'end' and redis.call('HGET', KEYS[3], ARGV[3]) == ARGV[4] then
  redis.call('HDEL', KEYS[3], ARGV[3])
end
return reply
