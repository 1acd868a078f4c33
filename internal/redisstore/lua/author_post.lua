-- This script puts a post in its author's own timelines: UserPosts
-- (ZADD of score = id, idempotent), the sets of the reader's index the
-- post belongs in (PublicPosts, NotToPosts with NotToListed of each reader
-- its audience lists, or OnlyToPosts of each reader it lists: postindex.go), and the author's home list (ordered
-- insert that skips an entry already there). UserPosts and the index
-- change in one step, so they never disagree.
--
-- The insert is announced on the author's live channel (LiveUser, in
-- their slot), once: a repeat by the worker inserts and announces nothing.
--
-- KEYS: UserPosts, Home, HomeMark, then the index sets (at most
-- social.MaxAudienceSize + 2), all of the author's slot. ARGV: post id,
-- home entry, cap, live channel, the publish command (SPUBLISH; PUBLISH
-- on the embedded development Redis).

redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1])
for i = 4, #KEYS do redis.call('ZADD', KEYS[i], ARGV[1], ARGV[1]) end
local added = home_insert(KEYS[2], KEYS[3], tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]))
-- pcall: a server without sharded pub/sub (the embedded development
-- Redis) still writes the post.
if added == 1 then redis.pcall(ARGV[5], ARGV[4], ARGV[2]) end
return added
