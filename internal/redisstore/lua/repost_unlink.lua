-- This script takes a deleted repost out of its original's PostReposts,
-- and out of PostPlainReposts when it is the reposter's plain repost.
-- Both are idempotent, so a deletion and its fan-out job may both run it.
--
-- KEYS: PostReposts(original), PostPlainReposts(original), the original's
-- hash, whose nreposts it sets (lib/counts.lua), PostViewers(original),
-- whose r flag of the reposter goes with the claim (lib/flags.lua). ARGV: the repost's id,
-- its author.

redis.call('SREM', KEYS[1], ARGV[1])
set_count(KEYS[3], F.post.nreposts, redis.call('SCARD', KEYS[1]))
local claim = redis.call('HGET', KEYS[2], ARGV[2])
if claim and string.match(claim, '^[^|]*') == ARGV[1] then
  redis.call('HDEL', KEYS[2], ARGV[2])
  set_flag(KEYS[4], ARGV[2], 'r', false)
end
return 1
