-- This script edits a post in one step: it checks the editor wrote the
-- post and that it is no plain repost, keeps the version it replaces at
-- the head of the post's edits (at most cap, the oldest dropped), and
-- writes the new content, spoiler text, sensitive flag, mentions and
-- edited time. A field given empty is removed (its absence is its empty
-- value). The edited time is the call's own: a run that finds it written
-- with the same content is go-redis retrying a run that succeeded, and
-- answers as that run did without keeping the version twice.
--
-- KEYS: Post, PostEdits. ARGV: the editor, the edit's time (ms), cap, the
-- new content, spoiler text, sensitive ("1" or ""), mentions
-- (comma-separated).
-- Reply: {'OK', the mentions before the edit, the edited time written},
-- or 'GONE' (no post),
-- 'FORBIDDEN' (another author's), 'PLAIN' (a plain repost).

local h = redis.call('HMGET', KEYS[1], F.post.author, F.post.content, F.post.spoiler, F.post.sensitive,
  F.post.mentions, F.post.edited, F.post.repost)
if not h[1] then return 'GONE' end
if h[1] ~= ARGV[1] then return 'FORBIDDEN' end
if h[7] and (h[2] or '') == '' then return 'PLAIN' end
if h[6] == ARGV[2] and h[2] == ARGV[4] then
  local last = redis.call('LINDEX', KEYS[2], 0)
  return {'OK', last and cjson.decode(last).m or '', h[6]}
end

-- The edited time versions content and mentions (the post cache keeps
-- them with it): each edit's is above the one before, also within one
-- millisecond.
local stamp = ARGV[2]
if h[6] and tonumber(h[6]) >= tonumber(stamp) then stamp = tostring(tonumber(h[6]) + 1) end
local old = {c = h[2] or '', t = tonumber(stamp), m = h[5] or ''}
if h[3] then old.s = h[3] end
if h[4] == '1' then old.x = 1 end
redis.call('LPUSH', KEYS[2], cjson.encode(old))
redis.call('LTRIM', KEYS[2], 0, tonumber(ARGV[3]) - 1)

local set, del = {F.post.content, ARGV[4], F.post.edited, stamp}, {}
local opt = {{F.post.spoiler, ARGV[5]}, {F.post.sensitive, ARGV[6]}, {F.post.mentions, ARGV[7]}}
for _, fv in ipairs(opt) do
  if fv[2] == '' then
    del[#del + 1] = fv[1]
  else
    set[#set + 1] = fv[1]
    set[#set + 1] = fv[2]
  end
end
redis.call('HSET', KEYS[1], unpack(set))
if #del > 0 then redis.call('HDEL', KEYS[1], unpack(del)) end
return {'OK', h[5] or '', stamp}
