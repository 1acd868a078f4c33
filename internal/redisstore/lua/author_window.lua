-- This script reads one window of an author's posts as a reader other
-- than the author may see them by audience: for a signed-in reader the
-- merge of the author's PublicPosts, NotToPosts and OnlyToPosts(author,
-- reader), the reader's index (keys.go), less the NOT_TO posts that list
-- the reader (NotToListed(author, reader)), cut to count. It never
-- returns a post whose audience leaves the reader out, so what a page
-- shows, and whether it says more follow, rest on posts the reader may
-- see. One command in the author's slot, where several range reads would
-- be several.
--
-- An anonymous reader reads PublicPosts alone, through the same script.
-- A locked account's posts are its followers': for a reader who does not
-- follow it (anyone anonymous) the window is empty, whatever the sets
-- hold, for the price of two reads.
--
-- KEYS: PublicPosts, NotToPosts, OnlyToPosts(author, reader),
-- NotToListed(author, reader) (PublicPosts alone for an anonymous
-- reader), then the author's profile (Keys.User) and Followers, all of
-- the author's slot. ARGV: the bound the window starts from and the one
-- it runs to, in ZRANGEBYSCORE's syntax ("(123", "-inf", "+inf"), count,
-- "rev" for newest first (else oldest first), the reader ('' when
-- anonymous).
-- Returns {ids, not, skipped}: up to count ids in order, those of them
-- that came from NotToPosts (posts written before NotToListed existed may
-- still list the reader until the index backfill ran: the caller screens
-- them), and how many posts it stepped over (the caller charges them to
-- the operation's read budget, as Redis work done).
--
-- NotToPosts is read in chunks of count, refilled 256 at a time past the
-- posts it steps over, at most skipBound of them a call: each is a post
-- its author wrote naming this reader, about 1 µs of Redis work. Past the
-- bound the window ends at the last post stepped over, as if the author's
-- posts ended there for this reader: a bounded call, at the price of
-- older posts of an author who wrote over skipBound posts against one
-- reader.

local signed = #KEYS > 3
local nlists = signed and 3 or 1
if redis.call('HGET', KEYS[#KEYS - 1], F.profile.locked) == '1'
  and (ARGV[5] == '' or not redis.call('ZSCORE', KEYS[#KEYS], ARGV[5])) then
  return {{}, {}, 0}
end
local rev = ARGV[4] == 'rev'
local cmd = rev and 'ZREVRANGEBYSCORE' or 'ZRANGEBYSCORE'
local n = tonumber(ARGV[3])
local skipBound = 10000
local refill = math.max(n, 256)
local lists, at, full = {}, {}, {}
for i = 1, nlists do
  lists[i] = redis.call(cmd, KEYS[i], ARGV[1], ARGV[2], 'LIMIT', 0, n)
  at[i], full[i] = 1, #lists[i] == n
end

-- next id of list i, refilling NotToPosts past what was stepped over.
local skipped, stop = 0, nil
local function head(i)
  local id = lists[i][at[i]]
  while i == 2 do
    if id == nil then
      if not full[2] then return nil end
      if skipped >= skipBound then stop = tonumber(lists[2][#lists[2]]) return nil end
      local last = lists[2][#lists[2]]
      lists[2] = redis.call(cmd, KEYS[2], '(' .. last, ARGV[2], 'LIMIT', 0, refill)
      at[2], full[2] = 1, #lists[2] == refill
      id = lists[2][1]
    elseif redis.call('ZSCORE', KEYS[4], id) then
      skipped = skipped + 1
      at[2] = at[2] + 1
      id = lists[2][at[2]]
    else
      break
    end
  end
  return id
end

local ids, nots = {}, {}
while #ids < n do
  local best, bv = nil, nil
  for i = 1, nlists do
    local id = head(i)
    if id then
      local v = tonumber(id)
      if best == nil or (rev and v > bv) or (not rev and v < bv) then best, bv = i, v end
    end
  end
  if best == nil then break end
  if stop and ((rev and bv < stop) or (not rev and bv > stop)) then break end
  local id = lists[best][at[best]]
  at[best] = at[best] + 1
  -- A post is in one of the sets; a repeat would be skipped.
  if ids[#ids] ~= id then
    ids[#ids + 1] = id
    if best == 2 then nots[#nots + 1] = id end
  end
end
return {ids, nots, skipped}
