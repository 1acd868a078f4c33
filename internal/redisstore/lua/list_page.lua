-- This script reads one round of a list's timeline, in the owner's slot:
-- the list must exist; the entries below the cursor (or above it, newer,
-- nearest first) whose authors the owner has not muted. Members are users
-- the owner follows (an unfollow takes them out of the lists), so the
-- feed's authors need no follow check.
--
-- KEYS: Lists, ListFeed, Mutes. ARGV: list id, cursor (exclusive; '' =
-- none), n, newer ('1').
-- Reply: false when there is no such list; else {exhausted (0/1), entries,
-- the last entry read ('' for none): where the next round goes on}.

if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return false end
local n = tonumber(ARGV[3])
local rows
if ARGV[4] == '1' then
  rows = redis.call('ZRANGE', KEYS[2], '(' .. ARGV[2], '+inf', 'BYSCORE', 'LIMIT', 0, n)
else
  local top = '+inf'
  if ARGV[2] ~= '' then top = '(' .. ARGV[2] end
  rows = redis.call('ZRANGE', KEYS[2], top, '-inf', 'BYSCORE', 'REV', 'LIMIT', 0, n)
end
local exhausted = 0
if #rows < n then exhausted = 1 end
local mutes = redis.call('EXISTS', KEYS[3]) == 1
local out = {}
for _, e in ipairs(rows) do
  if not mutes or redis.call('SISMEMBER', KEYS[3], string.match(e, ':(%d+)$')) == 0 then
    out[#out + 1] = e
  end
end
return {exhausted, out, rows[#rows] or ''}
