-- This script returns LLEN of a post's comment list and ARGV[1] of
-- its comments, newest first, after the cursor id ARGV[3] ('' for the
-- first page), as id, author, content, created, reply (the comment it
-- answers, or false) quintuples. The list is sorted by id, descending, so
-- the page after a cursor starts at the first id below it, found by
-- binary search (also when the cursor's comment was deleted meanwhile),
-- as PostComments pages. With ARGV[4] = '1', KEYS[1] is a comment's list
-- of answers (CommentReplies), sorted ascending, and the page runs oldest
-- first.
--
-- The comment hashes are named from ARGV[2], the key prefix of the post's
-- comments: they share the post's {p<id>} hash tag with KEYS[1], so they
-- are in the slot the script runs on, also in Redis Cluster. Declaring
-- them in KEYS would take a round trip to learn their ids first.
--
-- KEYS[2], when given, is the post's hash, whose packed newest comments
-- (cm, lib/packed.lua) the script writes: a page's read of a post whose
-- hash has no cm (written before hashes held them) sets it, once.

local len = redis.call('LLEN', KEYS[1])
local start = 0
if ARGV[3] ~= '' then
  if ARGV[4] == '1' then
    -- Ascending: the same search on the negated ids.
    start = list_after(KEYS[1], len, -tonumber(ARGV[3]), function(v) return -tonumber(v) end)
  else
    start = list_after(KEYS[1], len, tonumber(ARGV[3]), tonumber)
  end
end
local ids = redis.call('LRANGE', KEYS[1], start, start + tonumber(ARGV[1]) - 1)
local out = {len}
for _, id in ipairs(ids) do
  local h = redis.call('HMGET', ARGV[2] .. id, F.comment.author, F.comment.content, F.comment.created, F.comment.reply)
  out[#out + 1] = id
  out[#out + 1] = h[1]
  out[#out + 1] = h[2]
  out[#out + 1] = h[3]
  out[#out + 1] = h[4]
end
if KEYS[2] then pack_comments(KEYS[2], KEYS[1], ARGV[2]) end
return out
