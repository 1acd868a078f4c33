-- homeLib is the Lua shared by the scripts that write home lists.
local function entry_id(e) return tonumber(string.match(e, '^%d+')) end
local function entry_author(e) return string.match(e, ':(%d+)$') end
-- len, when the caller knows the list's length (LPUSH's reply), saves
-- an LLEN.
local function home_trim(home, mark, cap, len)
  if (len or redis.call('LLEN', home)) > cap then
    redis.call('LTRIM', home, 0, cap - 1)
    redis.call('HSET', mark, 'floor', entry_id(redis.call('LINDEX', home, -1)))
  end
end
-- home_insert puts entry (post pid) in its place in the list, newest
-- first, unless it is there already or below the floor, and trims the list
-- to cap. Nearly always the post is the newest: one LINDEX and one LPUSH,
-- and no read of the floor, which is at or below the head (every entry is
-- at or above it). floor, when the caller already read it, saves reading
-- it on the other paths; head, when the caller already read it (LINDEX's
-- reply: false for a missing list), saves the LINDEX.
--
-- A missing list is created only where the mark exists: otherwise the
-- reader's next read rebuilds the list anyway (a reader who never read,
-- or whose list and mark expired in hybrid mode: an inactive reader costs
-- an LINDEX and a PTTL, and no write). The new list takes the mark's TTL
-- (hybrid mode: both expire together when the reader stops reading,
-- home.go), so a list never outlives the mark that says it is kept up to
-- date.
local function home_insert(home, mark, pid, entry, cap, floor, head)
  if head == nil then head = redis.call('LINDEX', home, 0) end
  if head and entry_id(head) < pid then
    home_trim(home, mark, cap, redis.call('LPUSH', home, entry))
    return 1
  end
  if not head then
    local ttl = redis.call('PTTL', mark)
    -- -2: no mark; 0: the mark's last millisecond (the list would outlive
    -- it).
    if ttl == -2 or ttl == 0 then return 0 end
    if floor == nil then floor = redis.call('HGET', mark, 'floor') end
    if pid < tonumber(floor or '0') then return 0 end
    redis.call('LPUSH', home, entry)
    if ttl > 0 then redis.call('PEXPIRE', home, ttl) end
    return 1
  end
  if floor == nil then floor = redis.call('HGET', mark, 'floor') end
  if pid < tonumber(floor or '0') then return 0 end
  local pos, done = 0, false
  while not done do
    local chunk = redis.call('LRANGE', home, pos, pos + 63)
    for _, e in ipairs(chunk) do
      local id = entry_id(e)
      if id == pid then return 0 end
      if id < pid then
        redis.call('LINSERT', home, 'BEFORE', e, entry)
        done = true
        break
      end
    end
    if not done and #chunk < 64 then
      redis.call('RPUSH', home, entry)
      done = true
    end
    pos = pos + 64
  end
  home_trim(home, mark, cap)
  return 1
end
-- home_expire gives a reader's list and mark the TTL ttl (ms), or none
-- when ttl is 0 (push and pull modes keep lists for good). PEXPIRE and
-- PERSIST of a missing key do nothing.
local function home_expire(home, mark, ttl)
  if ttl > 0 then
    redis.call('PEXPIRE', home, ttl)
    redis.call('PEXPIRE', mark, ttl)
  else
    redis.call('PERSIST', home)
    redis.call('PERSIST', mark)
  end
end
