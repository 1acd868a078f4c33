-- This script takes one post out of one tag's index, in the tag's slot:
-- ZREM of both member forms (ARGV[1] PUBLIC, ARGV[2] NOT_TO) and, when
-- the PUBLIC form was there, the hour's use counter lowered while it
-- lives (a deleted post is no use; the HyperLogLog of users cannot forget
-- one, so the author still counts as a user of the tag in that hour).
--
-- One step, so a retried removal lowers the counter once.
--
-- KEYS: TagPosts, TagUses of the post's hour. ARGV: public member, NOT_TO
-- member.

local public = redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[2])
if public == 1 and redis.call('EXISTS', KEYS[2]) == 1 and tonumber(redis.call('GET', KEYS[2])) > 0 then
  redis.call('DECR', KEYS[2])
end
return public
