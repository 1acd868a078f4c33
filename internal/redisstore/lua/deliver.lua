-- This script puts a post in one recipient's home list, in the
-- recipient's slot, unless they muted the author or (for an ONLY_TO
-- audience, whose members need not follow) do not follow the author. A
-- follower who unfollows or blocks meanwhile is covered without a check
-- here: the hook that removes the author's posts runs after the graph
-- change, and every page drops authors the reader no longer follows. In
-- hybrid mode a recipient whose last home read is older than the
-- inactivity limit is skipped and marked stale instead: their list is
-- rebuilt when they come back. The insert skips a post already there.
--
-- It is the per-recipient cost of fan-out, so it does little: for the
-- usual newest post, SISMEMBER, HMGET of the marks, LINDEX, LPUSH (whose
-- reply is the length the cap is checked against).
--
-- KEYS: Home, HomeMark, Following, Mutes. ARGV: post id, entry, author,
-- cap, inactive-before (ms; 0: deliver to everyone), "1" to require that
-- the recipient follows the author, the recipient's live channel
-- (LiveUser, in their slot), the publish command (SPUBLISH; PUBLISH on the
-- embedded development Redis).
--
-- A delivered post is announced on the live channel in the same step, so
-- a live subscriber hears of it exactly when a page could show it. With no
-- subscriber anywhere SPUBLISH is one dictionary lookup.
-- Reply: 1 delivered, 0 not (already there, not following, muted), 2
-- skipped as inactive.

if ARGV[6] == '1' and redis.call('ZSCORE', KEYS[3], ARGV[3]) == false then return 0 end
if redis.call('SISMEMBER', KEYS[4], ARGV[3]) == 1 then return 0 end
local mark = redis.call('HMGET', KEYS[2], 'active', 'floor')
local before = tonumber(ARGV[5])
if before > 0 and (not mark[1] or tonumber(mark[1]) < before) then
  redis.call('HSET', KEYS[2], 'stale', '1')
  return 2
end
local added = home_insert(KEYS[1], KEYS[2], tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[4]), mark[2] or '0')
-- pcall: a server without sharded pub/sub (the embedded development
-- Redis) still delivers.
if added == 1 then redis.pcall(ARGV[8], ARGV[7], ARGV[2]) end
return added
