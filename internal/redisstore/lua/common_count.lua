-- This script counts, within a fixed amount of work, the members the
-- zsets KEYS[1] and KEYS[2] share: it takes count_sample of the smaller
-- (ARGV[1] members at most, in runs of ARGV[2]) and asks the other for
-- them (ZMSCORE). It returns {hits, card, sampled}: the members of the
-- sample the other holds, the smaller's size and the sample's, which
-- commonTotal turns into the total (exact when sampled = card). On
-- Redis Cluster the two keys are in two slots: common_sample.lua takes
-- the sample there, and the store asks the other zset itself.

-- The smaller is chosen from KEYS rather than by swapping two variables
-- in one assignment, which the embedded Redis's Lua gets wrong.
local ca, cb = redis.call('ZCARD', KEYS[1]), redis.call('ZCARD', KEYS[2])
local small, other, card = KEYS[1], KEYS[2], ca
if cb < ca then small, other, card = KEYS[2], KEYS[1], cb end
local ms = count_sample(small, card, tonumber(ARGV[1]), tonumber(ARGV[2]))
if #ms == 0 then return {0, card, 0} end
local hits = 0
for _, s in ipairs(redis.call('ZMSCORE', other, unpack(ms))) do
  if s then hits = hits + 1 end
end
return {hits, card, #ms}
