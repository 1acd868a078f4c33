-- This script reads a user's plain-repost claim of a post together with
-- its age by Redis's clock (TIME), the clock the claim was written by, so
-- that gateways whose clocks disagree judge a claim alike.
--
-- KEYS: PostPlainReposts(original). ARGV: the reposter. Returns the claim
-- ("<repost id>|<ms>", "" for none) and its age in ms (0 for none).

local cur = redis.call('HGET', KEYS[1], ARGV[1])
if not cur then return {'', 0} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local at = tonumber(string.match(cur, '|(%d+)$')) or 0
return {cur, now - at}
