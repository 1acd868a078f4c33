-- This script puts a post in its author's own timelines: UserPosts
-- (ZADD of score = id, idempotent), PublicPosts when everyone may see it,
-- and the author's home list (ordered insert that skips an entry already
-- there).
--
-- The insert is announced on the author's live channel (LiveUser, in
-- their slot), once: a repeat by the worker inserts and announces nothing.
--
-- KEYS: UserPosts, Home, HomeMark, PublicPosts. ARGV: post id, home entry,
-- cap, "1" when the post is public, live channel, the publish command
-- (SPUBLISH; PUBLISH on the embedded development Redis).

redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1])
if ARGV[4] == '1' then redis.call('ZADD', KEYS[4], ARGV[1], ARGV[1]) end
local added = home_insert(KEYS[2], KEYS[3], tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]))
-- pcall: a server without sharded pub/sub (the embedded development
-- Redis) still writes the post.
if added == 1 then redis.pcall(ARGV[6], ARGV[5], ARGV[2]) end
return added
