-- This script adds a repost to its original's PostReposts while the
-- original exists, so a link never outlives a deleted original. SADD makes
-- a retry a no-op.
--
-- KEYS: Post(original), PostReposts(original). ARGV: the repost's id.

if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('SADD', KEYS[2], ARGV[1])
set_count(KEYS[1], F.post.nreposts, redis.call('SCARD', KEYS[2]))
return 1
