-- This script puts a post in its author's own timelines: UserPosts
-- (ZADD of score = id, idempotent) and the author's home list (ordered
-- insert that skips an entry already there).
--
-- KEYS: UserPosts, Home, HomeMark. ARGV: post id, home entry, cap.

redis.call('ZADD', KEYS[1], ARGV[1], ARGV[1])
return home_insert(KEYS[2], KEYS[3], tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]))
