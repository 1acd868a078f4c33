-- This script reads one window of an author's posts as a signed-in reader
-- other than the author may see them by audience: the merge of the
-- author's PublicPosts, NotToPosts and OnlyToPosts(author, reader), the
-- reader's index (keys.go), cut to count. It never reads a post addressed
-- only to others, so its cost follows what the reader may see. One
-- command in the author's slot, where three range reads would be three.
--
-- An anonymous reader reads PublicPosts alone, through the same script.
-- A locked account's posts are its followers': for a reader who does not
-- follow it (anyone anonymous) the window is empty, whatever the sets
-- hold, for the price of two reads.
--
-- KEYS: PublicPosts, NotToPosts, OnlyToPosts(author, reader) (PublicPosts
-- alone for an anonymous reader), then the author's profile (Keys.User)
-- and Followers, all of the author's slot. ARGV: the bound the window
-- starts from and the one it runs to, in ZRANGEBYSCORE's syntax ("(123",
-- "-inf", "+inf"), count, "rev" for newest first (else oldest first),
-- the reader ('' when anonymous).
-- Returns {ids, not}: up to count ids in order, and those of them that
-- came from NotToPosts (their audience may list the reader: the caller
-- screens them).

local nlists = #KEYS - 2
if redis.call('HGET', KEYS[nlists + 1], F.profile.locked) == '1'
  and (ARGV[5] == '' or not redis.call('ZSCORE', KEYS[nlists + 2], ARGV[5])) then
  return {{}, {}}
end
local rev = ARGV[4] == 'rev'
local cmd = rev and 'ZREVRANGEBYSCORE' or 'ZRANGEBYSCORE'
local n = tonumber(ARGV[3])
local lists, at = {}, {}
for i = 1, nlists do
  lists[i] = redis.call(cmd, KEYS[i], ARGV[1], ARGV[2], 'LIMIT', 0, n)
  at[i] = 1
end
local ids, nots = {}, {}
while #ids < n do
  local best, bv = nil, nil
  for i = 1, nlists do
    local id = lists[i][at[i]]
    if id then
      local v = tonumber(id)
      if best == nil or (rev and v > bv) or (not rev and v < bv) then best, bv = i, v end
    end
  end
  if best == nil then break end
  local id = lists[best][at[best]]
  at[best] = at[best] + 1
  -- A post is in one of the sets; a repeat would be skipped.
  if ids[#ids] ~= id then
    ids[#ids + 1] = id
    if best == 2 then nots[#nots + 1] = id end
  end
end
return {ids, nots}
