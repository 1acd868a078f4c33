-- This script deletes a comment hash and its id in the post's list
-- in one step, if the viewer (ARGV[2]) wrote the comment or the post. The
-- comments of a deleted post are gone with it, whatever cleanup is left. It
-- leaves a short-lived tombstone naming the deleter, so go-redis retrying a
-- run that already succeeded answers OK rather than GONE. The post's
-- ncomments and cm (lib/packed.lua) follow the list.
--
-- KEYS: Post, PostComment(id), PostComments. ARGV: the id, the viewer, the
-- tombstone's TTL (ms), PostComment's key prefix, CommentReplies' key
-- prefix (the key without the comment's id).
--
-- The comment's own list of answers goes (the answers stay, answering
-- nothing), and an answer leaves the list of the comment it answers.

if redis.call('EXISTS', KEYS[1]) == 0 then return 'GONE' end
local author = redis.call('HGET', KEYS[2], F.comment.author)
if not author then
  if redis.call('HGET', KEYS[2], F.comment.deleted) == ARGV[2] then return 'OK' end
  return 'GONE'
end
if author ~= ARGV[2] and redis.call('HGET', KEYS[1], F.post.author) ~= ARGV[2] then
  return 'FORBIDDEN'
end
local parent = redis.call('HGET', KEYS[2], F.comment.reply)
if parent then redis.call('LREM', ARGV[5] .. parent, 0, ARGV[1]) end
redis.call('DEL', ARGV[5] .. ARGV[1])
redis.call('LREM', KEYS[3], 0, ARGV[1])
set_count(KEYS[1], F.post.ncomments, redis.call('LLEN', KEYS[3]))
redis.call('DEL', KEYS[2])
pack_comments(KEYS[1], KEYS[3], ARGV[4])
redis.call('HSET', KEYS[2], F.comment.deleted, ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 'OK'
