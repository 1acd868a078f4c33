-- This script puts a post in the home lists of a batch of recipients, all
-- on the server that runs it, unless (for an ONLY_TO audience, whose
-- members need not follow) a recipient does not follow the author. The
-- caller has left out the followers who mute the author (MutedBy, read by
-- follower_page.lua in the author's slot), and those the audience
-- excludes. A follower who unfollows, blocks or mutes meanwhile is covered
-- without a check here: the hook that removes the author's posts runs
-- after the graph change, and every page drops authors the reader no
-- longer follows or has muted. The insert skips a post already there, so a
-- batch run again (a redelivered job, a retry after an error halfway)
-- changes nothing it did before.
--
-- Hybrid mode skips inactive readers by their missing list: a reader's
-- Home and HomeMark expire together INACTIVE_DAYS after their last read
-- (home.go), and a missing list is created only when the mark exists (an
-- active reader whose list was empty; lib/home.lua), the new list taking
-- the mark's TTL. A reader without a mark, in any mode, is rebuilt at
-- their next read.
--
-- Why one call for many recipients: calling a script costs Redis about as
-- much as an LPUSH, so a call per recipient cost more than the writes
-- (docs/performance.md, "Fan-out"). Here a recipient costs only its
-- commands, for the usual newest post: LINDEX and LPUSH (lib/home.lua),
-- about what a raw pipelined LPUSH costs client and server together.
--
-- Keys: a recipient's keys are built here from their id and the key parts
-- of Keys (keys.go). They are not declared, as Redis Cluster requires
-- declared keys to share one slot: KEYS[1] is one recipient's Home, which
-- routes the call to the recipients' server. On Redis Cluster the caller
-- groups the recipients by server and runs the variant of this script with
-- the shebang line that allows other slots of that server (scripts.go);
-- Redis stops the script at the first key of another server (the slot map
-- changed), and the caller runs the batch again a recipient at a time.
--
-- ARGV: post id, entry, author, cap, "1" to require that the recipient
-- follows the author, the publish command (SPUBLISH; PUBLISH on the embedded
-- development Redis), the PUBSUB subcommand that counts its subscribers
-- (SHARDNUMSUB; NUMSUB), the key parts (what every user key starts with
-- before the id, then what Home, HomeMark, Following and LiveUser add
-- after it), then the recipients' ids.
--
-- A delivered post is announced on the recipient's live channel in the
-- same step, so a live subscriber hears of it exactly when a page could
-- show it. Only channels with a subscriber on this server are published
-- to: they are found once, in this step (no one can subscribe between
-- the look and the inserts), when the first post lands (listen_set). A
-- SPUBLISH with no subscriber still costs a command, and on Redis Cluster
-- a message to each replica of the shard; counting every recipient's
-- channel cost about 14 % of the delivery (docs/performance.md), so
-- the count is made only where the server has many live channels. (Live
-- subscribers therefore subscribe on the masters, as go-redis does unless
-- ReadOnly is set.)
--
-- Reply: how many recipients got the post.

local pid, entry, author = tonumber(ARGV[1]), ARGV[2], ARGV[3]
local cap, must_follow = tonumber(ARGV[4]), ARGV[5] == '1'
local publish, count = ARGV[6], ARGV[7]
local uk, t_home, t_mark, t_following, t_live = ARGV[8], ARGV[9], ARGV[10], ARGV[11], ARGV[12]
local first = 13

-- listening: the set of the batch's live channels that have a subscriber
-- here; false when the server cannot tell (publish to all).
local listening = nil
-- glob escapes s for a PUBSUB pattern.
local function glob(s) return (string.gsub(s, '([%*%?%[%]\\])', '\\%1')) end
-- listen_set finds the live channels of this server that have a
-- subscriber, at the least cost for how many there are: none (the usual
-- case where no live reader is on this server), one INFO; fewer than the
-- batch's recipients, the list of them (O(subscribed channels)); else the
-- count of each of the batch's channels.
local function listen_set()
  local shard = count == 'SHARDNUMSUB'
  local info = redis.pcall('INFO', 'stats')
  local n = nil
  if type(info) == 'string' then
    local v = string.match(info, (shard and 'pubsubshard_channels' or 'pubsub_channels') .. ':(%d+)')
    if v then n = tonumber(v) end
  end
  if n == 0 then return {} end
  local set = {}
  if n and n < #ARGV - first + 1 then
    local r = redis.pcall('PUBSUB', shard and 'SHARDCHANNELS' or 'CHANNELS', glob(uk) .. '*' .. glob(t_live))
    if not r.err then
      for _, ch in ipairs(r) do set[ch] = true end
      return set
    end
  end
  for i = first, #ARGV, 500 do
    local chans = {}
    for j = i, math.min(i + 499, #ARGV) do chans[#chans + 1] = uk .. ARGV[j] .. t_live end
    local r = redis.pcall('PUBSUB', count, unpack(chans))
    if r.err then return false end
    for j = 2, #r, 2 do
      if r[j] > 0 then set[r[j - 1]] = true end
    end
  end
  return set
end
local function announce(u)
  if listening == nil then listening = listen_set() end
  if listening == false or next(listening) then
    local ch = uk .. u .. t_live
    -- pcall: a server without sharded pub/sub (the embedded development
    -- Redis) still delivers.
    if listening == false or listening[ch] then redis.pcall(publish, ch, entry) end
  end
end

local delivered = 0
for i = first, #ARGV do
  local u = ARGV[i]
  if not must_follow or redis.call('ZSCORE', uk .. u .. t_following, author) then
    local home = uk .. u .. t_home
    local head = redis.call('LINDEX', home, 0)
    local added = false
    if head and entry_id(head) < pid then
      -- The usual case, home_insert's first branch inlined so that the
      -- mark's key is built only when a trim needs it.
      local len = redis.call('LPUSH', home, entry)
      if len > cap then home_trim(home, uk .. u .. t_mark, cap, len) end
      added = true
    else
      -- An older post, or no list (created only where the mark exists).
      added = home_insert(home, uk .. u .. t_mark, pid, entry, cap, nil, head) == 1
    end
    if added then
      delivered = delivered + 1
      announce(u)
    end
  end
end
return delivered
