-- The newest comments of a post, packed into its hash's cm field so a page
-- reads them with the post: "r", then up to PACKED (4) comments, newest
-- first, each "<id> <author> <created ms> <answered id or -> <content
-- bytes> <content>", concatenated (the length lets content hold anything).
-- A value without the leading "r" is of the form before answers, without
-- the answered id (rows.go reads both). Written by the scripts that
-- change a post's comment list, after the change, with ncomments; a post
-- whose cm is missing (older data) has it written by comment_rows.lua.
local PACKED = 4
local function pack_comments(post, list, prefix)
  if redis.call('EXISTS', post) == 0 then return end
  local parts = {'r'}
  for _, id in ipairs(redis.call('LRANGE', list, 0, PACKED - 1)) do
    local h = redis.call('HMGET', prefix .. id, F.comment.author, F.comment.content, F.comment.created, F.comment.reply)
    if not h[1] then
      -- A comment without its hash: no packed copy; readers fall back
      -- on comment_rows.lua.
      redis.call('HDEL', post, F.post.cm)
      return
    end
    local content = h[2] or ''
    parts[#parts + 1] = id .. ' ' .. h[1] .. ' ' .. (h[3] or '0') .. ' ' .. (h[4] or '-') .. ' ' .. #content .. ' ' .. content
  end
  redis.call('HSET', post, F.post.cm, table.concat(parts))
end
