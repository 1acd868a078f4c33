-- This script claims a user's one plain repost of a post, while the post
-- exists. A claim left by a repost that was never written (its writer died
-- before writing the hash) is taken over by passing its id as expected.
-- The claim records when it was made by Redis's clock (TIME), which is
-- what repost_claim_age.lua measures its age by.
--
-- The reposter's r flag in PostViewers (lib/flags.lua) goes with the
-- claim.
--
-- KEYS: Post(original), PostPlainReposts(original), PostViewers(original). ARGV: the reposter,
-- the new repost's id, the claim expected to be there ("" for none).
-- Returns the claim that holds ("<repost id>|<ms>"; "" when the original
-- is gone): the new one, or another writer's.

if redis.call('EXISTS', KEYS[1]) == 0 then return '' end
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if cur and cur ~= ARGV[3] then return cur end
local t = redis.call('TIME')
local claim = ARGV[2] .. '|' .. string.format('%.0f', tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000))
redis.call('HSET', KEYS[2], ARGV[1], claim)
set_flag(KEYS[3], ARGV[1], 'r', true)
return claim
