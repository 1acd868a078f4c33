-- This script reads one round of a home page from the list, in the
-- reader's slot: it records the read as activity, says when the list must
-- first be rebuilt or pulled, and returns the entries below the cursor
-- whose authors the reader still follows and has not muted.
--
-- Activity: at most every activeEvery the read writes the time and gives
-- the list and mark their TTL again (hybrid mode: INACTIVE_DAYS; other
-- modes remove a TTL left by hybrid mode). A missing mark means the list
-- is not known to be complete: the reader never read it, or both expired
-- while hybrid fan-out skipped the reader (deliver_batch.lua); the list is
-- rebuilt; the read marks it stale first, and only a fill that succeeds
-- clears that.
--
-- KEYS: Home, HomeMark, Following, Mutes, CelebFollowing.
-- ARGV: reader, cursor (exclusive; "" = none), n, now (ms), activeEvery
-- (ms), pull mode ("1"), first page ("1"), TTL of the list and mark (ms;
-- 0: none), newer ("1": the entries above the cursor, nearest first,
-- instead of those below it), fold window (entries; absent or 0: none).
--
-- Reply: {"rebuild"|"pull", followees, pull, pullprev, pullat} or
-- {"ok", floor, exhausted (0/1), entries, pulled authors (CelebFollowing,
-- allowed), followees (allowed; only when the list is exhausted above a
-- floor, for the pages below it; when reading newer, whenever the cursor
-- is below the floor), above, bottom}: with a fold window w, above is the
-- allowed entries among the list's newest w that are above the cursor
-- (downwards, the cursor's own entry too: it was on the page before), and
-- bottom the id of the w-th entry, or the floor when the list is shorter
-- (timeline_fold.go).

local now = tonumber(ARGV[4])
local m = redis.call('HMGET', KEYS[2], 'active', 'floor', 'stale', 'pull', 'pullprev', 'pullat')
local missing = not (m[1] or m[2] or m[3] or m[4])
if missing and ARGV[6] ~= '1' then
  -- The mark is written now, with stale: until a fill succeeds (and
  -- clears it), every read asks for the rebuild again, so a fill that
  -- fails (a timeout, a crash) cannot leave a list taken for complete.
  redis.call('HSET', KEYS[2], 'stale', '1')
  m[3] = '1'
end
if not m[1] or now - tonumber(m[1]) >= tonumber(ARGV[5]) then
  redis.call('HSET', KEYS[2], 'active', ARGV[4])
  home_expire(KEYS[1], KEYS[2], tonumber(ARGV[8]))
end
local need = nil
if m[3] then need = 'rebuild'
elseif ARGV[6] == '1' and (ARGV[7] == '1' or not m[4]) then need = 'pull'
elseif ARGV[6] ~= '1' and m[4] then need = 'rebuild' end
if need then
  return {need, allowed_list(redis.call('ZRANGE', KEYS[3], 0, -1)), m[4] or '0', m[5] or '0', m[6] or '0'}
end
local floor = tonumber(m[2] or '0')
local n = tonumber(ARGV[3])
local window = tonumber(ARGV[10] or '0')
-- fold_above returns the reply's above and bottom; stop is the index of
-- the first entry below the cursor. A page further down than the window
-- needs none: what it reads is beyond the fold.
local function fold_above(len, stop, newer, cursor)
  local above, bottom = {}, floor
  if window == 0 then return above, bottom end
  if len >= window then bottom = entry_id(redis.call('LINDEX', KEYS[1], window - 1)) end
  if stop > 0 and (newer or stop < window) then
    for _, e in ipairs(redis.call('LRANGE', KEYS[1], 0, math.min(stop, window) - 1)) do
      if (not newer or entry_id(e) > cursor) and allowed(entry_author(e)) then above[#above + 1] = e end
    end
  end
  return above, bottom
end
if ARGV[9] == '1' then
  -- Newer: walk up from the cursor towards the head.
  local cursor = tonumber(ARGV[2])
  local len = redis.call('LLEN', KEYS[1])
  local top = list_after(KEYS[1], len, cursor, entry_id) - 1
  local above, bottom = fold_above(len, top + 1, true, cursor)
  local out, size = {}, math.max(n, 32)
  while top >= 0 and #out < n do
    local chunk = redis.call('LRANGE', KEYS[1], math.max(0, top - size + 1), top)
    for i = #chunk, 1, -1 do
      local e = chunk[i]
      top = top - 1
      if entry_id(e) > cursor and allowed(entry_author(e)) then
        out[#out + 1] = e
        if #out == n then break end
      end
    end
  end
  local followees = {}
  if cursor < floor then followees = allowed_list(redis.call('ZRANGE', KEYS[3], 0, -1)) end
  return {'ok', floor, top < 0 and 1 or 0, out, allowed_list(redis.call('SMEMBERS', KEYS[5])), followees, above, bottom}
end
local pos = 0
local above, bottom = {}, floor
if ARGV[2] ~= '' then
  local len = redis.call('LLEN', KEYS[1])
  pos = list_after(KEYS[1], len, tonumber(ARGV[2]), entry_id)
  above, bottom = fold_above(len, pos, false)
end
local out, exhausted = {}, 0
local size = math.max(n, 32)
while true do
  local chunk = redis.call('LRANGE', KEYS[1], pos, pos + size - 1)
  local used = 0
  for _, e in ipairs(chunk) do
    used = used + 1
    if allowed(entry_author(e)) then out[#out + 1] = e end
    if #out == n then break end
  end
  if #chunk < size and used == #chunk then exhausted = 1 end
  if #out == n or exhausted == 1 then break end
  pos = pos + size
end
local followees = {}
if exhausted == 1 and floor > 0 then followees = allowed_list(redis.call('ZRANGE', KEYS[3], 0, -1)) end
return {'ok', floor, exhausted, out, allowed_list(redis.call('SMEMBERS', KEYS[5])), followees, above, bottom}
