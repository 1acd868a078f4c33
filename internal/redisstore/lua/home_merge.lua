-- This script merges entries into a home list in one step: the result
-- is sorted newest first, without duplicates, without entries below the
-- new floor or of authors the reader may no longer see, and at most cap
-- long (trimming raises the floor to the oldest entry kept). Rebuilds,
-- pulls and follow backfills use it; it is idempotent.
--
-- KEYS: Home, HomeMark, Following, Mutes.
-- ARGV: reader, cap, floor mode ("set" or "max"), floor, "1" for a fill
-- (a rebuild or pull by a read: it clears stale, and may create the mark),
-- pull marks (pull, pullprev, pullat; "" leaves them, "-" deletes
-- them), the TTL of the list and mark (ms; 0: none), then the entries.
--
-- Every merge is the reader's doing (a read, their follow or unmute), so
-- in hybrid mode it counts as activity: the list and mark get the full
-- TTL (they expire together, home.go).

-- A merge that is not a fill (a follow's or an unmute's backfill) on a
-- reader without a mark writes nothing: their list is not kept (it
-- expired), and their next read rebuilds it, followee included.
if ARGV[5] ~= '1' and redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local cap = tonumber(ARGV[2])
local floor = tonumber(ARGV[4])
if ARGV[3] == 'max' then floor = math.max(floor, tonumber(redis.call('HGET', KEYS[2], 'floor') or '0')) end
local all, seen = {}, {}
local function add(e)
  local id = entry_id(e)
  if id and id >= floor and not seen[id] and allowed(entry_author(e)) then
    seen[id] = true
    all[#all + 1] = {id, e}
    return true
  end
  return false
end
local old = redis.call('LRANGE', KEYS[1], 0, -1)
local changed = false
for _, e in ipairs(old) do if not add(e) then changed = true end end
for i = 10, #ARGV do if add(ARGV[i]) then changed = true end end
if #all > cap then
  table.sort(all, function(a, b) return a[1] > b[1] end)
  floor = all[cap][1]
  -- A new table rather than nils at the end: the embedded development
  -- Redis's Lua (gopher-lua) keeps counting the nils in #all.
  local kept = {}
  for i = 1, cap do kept[i] = all[i] end
  all = kept
  changed = true
end
-- A merge that adds and drops nothing leaves the list as it is.
if changed then
  table.sort(all, function(a, b) return a[1] > b[1] end)
  redis.call('DEL', KEYS[1])
  for i = 1, #all, 500 do
    local part = {}
    for j = i, math.min(i + 499, #all) do part[#part + 1] = all[j][2] end
    redis.call('RPUSH', KEYS[1], unpack(part))
  end
end
redis.call('HSET', KEYS[2], 'floor', floor)
if ARGV[5] == '1' then redis.call('HDEL', KEYS[2], 'stale') end
if ARGV[6] == '-' then
  redis.call('HDEL', KEYS[2], 'pull', 'pullprev', 'pullat')
elseif ARGV[6] ~= '' then
  redis.call('HSET', KEYS[2], 'pull', ARGV[6], 'pullprev', ARGV[7], 'pullat', ARGV[8])
end
home_expire(KEYS[1], KEYS[2], tonumber(ARGV[9]))
return #all
