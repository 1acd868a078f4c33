-- homeAllowLib decides, in the reader's slot, whether a home list may show
-- an author: the reader themself, or someone they follow and have not
-- muted. A block removes the follow edges both ways, so it is covered too.
-- KEYS[3] is Following(reader), KEYS[4] Mutes(reader); ARGV[1] the reader.
-- Most readers mute no one: one EXISTS of Mutes, on the first author
-- that needs it, spares a SISMEMBER an author.
local allow_cache = {}
local mutes_any = nil
local function muted(a)
  if mutes_any == nil then mutes_any = redis.call('EXISTS', KEYS[4]) == 1 end
  return mutes_any and redis.call('SISMEMBER', KEYS[4], a) == 1
end
local function allowed(a)
  local v = allow_cache[a]
  if v == nil then
    v = a == ARGV[1] or (redis.call('ZSCORE', KEYS[3], a) ~= false and not muted(a))
    allow_cache[a] = v
  end
  return v
end
local function allowed_list(members)
  local out = {}
  for _, a in ipairs(members) do
    if a ~= ARGV[1] and allowed(a) then out[#out + 1] = a end
  end
  return out
end
