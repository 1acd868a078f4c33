-- This script reads one post as a page shows it, in one call: its hash,
-- the facts its visibility check needs, and the extras asked for.
--
-- KEYS: the post hash, its onlyTo and notTo sets, Likers, PostComments,
-- PostReposts, PostPlainReposts; all carry the post's {p<id>} hash tag,
-- so they are in one slot, also in Redis Cluster. The comment hashes are
-- named from ARGV[6], the key prefix of the post's comments, in the same
-- slot (as comment_rows.lua).
-- ARGV: the viewer ('' for none), the hash fields to read (ARGV[2], a
-- count, then that many names from ARGV[7]), counters wanted ('1'),
-- marks wanted ('1'), comments to read (0: none), the comment prefix.
--
-- Reply: the hash fields, then inOnlyTo, inNotTo, likes, comments,
-- reposts, liked, reposted (0/1 or counts; 0 when not asked), then id,
-- author, content, created of each comment read, newest first. A missing
-- post answers its fields (all nil) only.
--
-- Only what decides the answer is read: the audience sets only for the
-- visibility that consults them (field 'vis', which must be among the
-- fields, as must the author, the first), the viewer's like only when the
-- post has likes, the comment rows only when it has comments.

local viewer = ARGV[1]
local nf = tonumber(ARGV[2])
local fields = {}
local vis = 0
for i = 1, nf do
  fields[i] = ARGV[6 + i]
  if fields[i] == 'vis' then vis = i end
end
local out = redis.call('HMGET', KEYS[1], unpack(fields))
if not out[1] then return out end
local base = nf
for i = 1, 7 do out[base + i] = 0 end
if viewer ~= '' and viewer ~= out[1] then
  if out[vis] == 'ONLY_TO' then
    out[base + 1] = redis.call('SISMEMBER', KEYS[2], viewer)
  elseif out[vis] == 'NOT_TO' then
    out[base + 2] = redis.call('SISMEMBER', KEYS[3], viewer)
  end
end
local likes, comments = -1, -1
if ARGV[3] == '1' then
  likes = redis.call('ZCARD', KEYS[4])
  comments = redis.call('LLEN', KEYS[5])
  out[base + 3] = likes
  out[base + 4] = comments
  out[base + 5] = redis.call('SCARD', KEYS[6])
end
if ARGV[4] == '1' and viewer ~= '' then
  if likes ~= 0 and redis.call('ZSCORE', KEYS[4], viewer) then out[base + 6] = 1 end
  local r = redis.call('HGET', KEYS[7], viewer)
  if r and r ~= '' then out[base + 7] = 1 end
end
local n = tonumber(ARGV[5])
if n > 0 then
  if comments < 0 then
    comments = redis.call('LLEN', KEYS[5])
    out[base + 4] = comments
  end
  if comments > 0 then
    local ids = redis.call('LRANGE', KEYS[5], 0, n - 1)
    for _, id in ipairs(ids) do
      local h = redis.call('HMGET', ARGV[6] .. id, 'author', 'content', 'created')
      out[#out + 1] = id
      out[#out + 1] = h[1]
      out[#out + 1] = h[2]
      out[#out + 1] = h[3]
    end
  end
end
return out
