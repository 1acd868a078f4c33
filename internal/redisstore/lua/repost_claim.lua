-- This script claims a user's one plain repost of a post, while the post
-- exists. A claim left by a repost that was never written (its writer died
-- before writing the hash) is taken over by passing its id as expected.
--
-- KEYS: Post(original), PostPlainReposts(original). ARGV: the reposter,
-- the new claim ("<repost id>|<ms>"), the claim expected to be there (""
-- for none). Returns the claim that holds ("" when the original is gone):
-- the new one, or another writer's.

if redis.call('EXISTS', KEYS[1]) == 0 then return '' end
local cur = redis.call('HGET', KEYS[2], ARGV[1])
if cur and cur ~= ARGV[3] then return cur end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return ARGV[2]
