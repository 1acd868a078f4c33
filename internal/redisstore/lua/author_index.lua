-- This script adds a post written before the reader's index existed to
-- the index sets it belongs in (postindex.go), only while the post is
-- still in its author's UserPosts: a post deleted meanwhile (its delete
-- took it out of UserPosts first) is not put back. ZADD of score = id:
-- a repeat changes nothing.
--
-- KEYS: UserPosts, then the index sets, all of the author's slot.
-- ARGV: post id.

if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
for i = 2, #KEYS do redis.call('ZADD', KEYS[i], ARGV[1], ARGV[1]) end
return 1
