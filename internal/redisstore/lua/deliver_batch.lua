-- This script puts a post in the home lists of a batch of recipients, all
-- on the server that runs it, unless a recipient muted the author or (for
-- an ONLY_TO audience, whose members need not follow) does not follow the
-- author. A follower who unfollows or blocks meanwhile is covered without a
-- check here: the hook that removes the author's posts runs after the graph
-- change, and every page drops authors the reader no longer follows. In
-- hybrid mode a recipient whose last home read is older than the
-- inactivity limit is skipped and marked stale instead: their list is
-- rebuilt when they come back. The insert skips a post already there, so a
-- batch run again (a redelivered job, a retry after an error halfway)
-- changes nothing it did before.
--
-- Why one call for many recipients: calling a script costs Redis about as
-- much as an LPUSH, so a call per recipient cost more than the writes
-- (docs/performance.md, "Fan-out"). Here a recipient costs only its
-- commands, for the usual newest post: HMGET of its marks (activity, and
-- whether it mutes anyone: then SISMEMBER Mutes), LINDEX and LPUSH
-- (lib/home.lua). Each key a recipient's commands touch is a memory
-- lookup Redis pays, so they touch two keys where they can.
--
-- Keys: a recipient's keys are built here from their id and the key parts
-- of Keys (keys.go), which is cheaper for Redis than parsing four key
-- names per recipient. They are not declared, as Redis Cluster requires
-- declared keys to share one slot: KEYS[1] is one recipient's Home, which
-- routes the call to the recipients' server. On Redis Cluster the caller
-- groups the recipients by server and runs the variant of this script with
-- the shebang line that allows other slots of that server (scripts.go);
-- Redis stops the script at the first key of another server (the slot map
-- changed), and the caller runs the batch again a recipient at a time.
--
-- ARGV: post id, entry, author, cap, inactive-before (ms; 0: deliver to
-- everyone), "1" to require that the recipient follows the author, the
-- publish command (SPUBLISH; PUBLISH on the embedded development Redis),
-- the PUBSUB subcommand that counts its subscribers (SHARDNUMSUB;
-- NUMSUB), the key parts (what every user key starts with before the id,
-- then what Home, HomeMark, Following, Mutes and LiveUser add after it),
-- then the recipients' ids.
--
-- A delivered post is announced on the recipient's live channel in the
-- same step, so a live subscriber hears of it exactly when a page could
-- show it. Only channels with a subscriber on this server are published
-- to: they are counted once, in this step (no one can subscribe between
-- the count and the inserts), when the first post lands. A SPUBLISH with
-- no subscriber still costs a command, and on Redis Cluster a message to
-- each replica of the shard. (Live subscribers therefore subscribe on the
-- masters, as go-redis does unless ReadOnly is set.)
--
-- Reply: how many recipients got the post.

local pid, entry, author = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local cap, before, must_follow = tonumber(ARGV[4]), tonumber(ARGV[5]), ARGV[6] == '1'
local uk, t_home, t_mark, t_following, t_mutes, t_live = ARGV[9], ARGV[10], ARGV[11], ARGV[12], ARGV[13], ARGV[14]
local first = 15

-- listening: the set of the batch's live channels that have a subscriber
-- here; false when the server cannot count them (publish to all).
local listening = nil
local function announce(u)
  if listening == nil then
    listening = {}
    for i = first, #ARGV, 500 do
      local chans = {}
      for j = i, math.min(i + 499, #ARGV) do chans[#chans + 1] = uk .. ARGV[j] .. t_live end
      local r = redis.pcall('PUBSUB', ARGV[8], unpack(chans))
      if r.err then
        listening = false
        break
      end
      for j = 2, #r, 2 do
        if r[j] > 0 then listening[r[j - 1]] = true end
      end
    end
  end
  if listening == false or next(listening) then
    local ch = uk .. u .. t_live
    -- pcall: a server without sharded pub/sub (the embedded development
    -- Redis) still delivers.
    if listening == false or listening[ch] then redis.pcall(ARGV[7], ch, entry) end
  end
end

-- muted tells whether u muted the author. The mark's mutes flag (set by
-- Mute, dropped by Unmute: home.go) spares the lookup of Mutes for the
-- many who mute no one; when it is unknown, the set is counted and the
-- flag recorded, once.
local function muted(u, mark, flag)
  if flag == '0' then return false end
  local mutes = uk .. u .. t_mutes
  if not flag then
    flag = redis.call('SCARD', mutes) > 0 and '1' or '0'
    redis.call('HSET', mark, 'mutes', flag)
  end
  return flag == '1' and redis.call('SISMEMBER', mutes, author) == 1
end

local delivered = 0
for i = first, #ARGV do
  local u = ARGV[i]
  if not must_follow or redis.call('ZSCORE', uk .. u .. t_following, author) then
    local mark = uk .. u .. t_mark
    local m = redis.call('HMGET', mark, 'active', 'mutes')
    if before > 0 and tonumber(m[1] or '0') < before then
      redis.call('HSET', mark, 'stale', '1')
    elseif not muted(u, mark, m[2]) and home_insert(uk .. u .. t_home, mark, pid, entry, cap) == 1 then
      delivered = delivered + 1
      announce(u)
    end
  end
end
return delivered
