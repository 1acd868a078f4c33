-- This script writes a comment hash and inserts its id into the post's
-- list in one step, if the post still exists. The id is fresh from INCR, so
-- an existing hash means this is go-redis retrying a run that already
-- succeeded: it answers OK and writes nothing, and the list never holds an
-- id twice.
--
-- With the comment it writes its retry mark (CommentRetry), which the
-- caller deletes once the comment's notification job is queued (in
-- another slot, so not here). A mark already there is an earlier call of
-- the same comment whose job may not have been queued: the script writes
-- nothing and answers that comment's id, for the caller to queue its job
-- and answer it.
--
-- KEYS: Post, PostComment(id), PostComments, CommentRetry; for an answer
-- to a comment, that comment's PostComment and its CommentReplies. ARGV:
-- the id, the mark's TTL (ms), PostComment's key prefix (the key without
-- the id), then the hash's fields and values. Returns OK, GONE, NOPARENT
-- (the comment answered is gone) or the id of the earlier comment. An
-- answer's id goes into the answered comment's list of answers, kept
-- sorted by id, ascending (oldest first).
--
-- The list is kept sorted by id, descending, which is what lets a cursor
-- (a comment id) find its place by binary search. Ids are handed out
-- before this script runs, so two concurrent comments may arrive out of
-- order: the usual case is a plain LPUSH, the other an insert after the
-- few newer ids already at the head. The post's ncomments is set to the
-- list's length after the insert (lib/counts.lua), and its cm to the newest
-- comments (lib/packed.lua).

if redis.call('EXISTS', KEYS[1]) == 0 then return 'GONE' end
if redis.call('EXISTS', KEYS[2]) == 1 then return 'OK' end
if KEYS[5] and not redis.call('HGET', KEYS[5], F.comment.author) then return 'NOPARENT' end
local earlier = redis.call('GET', KEYS[4])
if earlier then return earlier end
redis.call('SET', KEYS[4], ARGV[1], 'PX', ARGV[2])
redis.call('HSET', KEYS[2], unpack(ARGV, 4))

-- insert puts entry (an id) at its place in list.
local function insert(list, entry)
  local id = tonumber(entry)
  local head = redis.call('LINDEX', list, 0)
  if not head or tonumber(head) < id then
    redis.call('LPUSH', list, entry)
    return
  end
  local pos = 1
  while true do
    local chunk = redis.call('LRANGE', list, pos, pos + 63)
    if #chunk == 0 then
      redis.call('RPUSH', list, entry)
      return
    end
    for _, v in ipairs(chunk) do
      if tonumber(v) < id then
        redis.call('LINSERT', list, 'BEFORE', v, entry)
        return
      end
    end
    pos = pos + 64
  end
end

-- append puts entry at its place in a list sorted ascending: at the
-- tail, but for an answer that arrives after a newer one.
local function append(list, entry)
  local id = tonumber(entry)
  local tail = redis.call('LINDEX', list, -1)
  if not tail or tonumber(tail) < id then
    redis.call('RPUSH', list, entry)
    return
  end
  local all = redis.call('LRANGE', list, 0, -1)
  for i = #all, 1, -1 do
    if tonumber(all[i]) < id then
      redis.call('LINSERT', list, 'AFTER', all[i], entry)
      return
    end
  end
  redis.call('LPUSH', list, entry)
end

insert(KEYS[3], ARGV[1])
if KEYS[6] then append(KEYS[6], ARGV[1]) end
set_count(KEYS[1], F.post.ncomments, redis.call('LLEN', KEYS[3]))
pack_comments(KEYS[1], KEYS[3], ARGV[3])
return 'OK'
