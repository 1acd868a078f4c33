-- This script sets or clears some of an account's flags in AuthorFlags
-- (authorflags.go): the hash of user id → flag letters that every
-- visibility check reads for its batch's authors. Letters combine (a
-- locked account may be suspended), so the change is a read-modify-write
-- of the account's field, atomic here; a field left with no letter is
-- removed, so the hash holds only flagged accounts. The hash also counts
-- the accounts holding a letter that hides their posts, in a field no id
-- can be, so that a check learns with its authors' flags whether any
-- account is hidden at all.
--
-- KEYS[1]: AuthorFlags; KEYS[2] (optional): a set of the same slot that
-- holds the account exactly while the flag does (Deleting, the purges'
-- work list), changed in the same step.
-- ARGV: user id, the letters, '1' to set or '0' to clear them, the
-- letters that hide, the count's field (removed at 0).
-- Returns the account's letters after the change.
local cur = redis.call('HGET', KEYS[1], ARGV[1]) or ''
local nxt = string.gsub(cur, '[' .. ARGV[2] .. ']', '')
if ARGV[3] == '1' then
  nxt = nxt .. ARGV[2]
end
if nxt == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], nxt)
end
local hides = '[' .. ARGV[4] .. ']'
local was, is = string.find(cur, hides) ~= nil, string.find(nxt, hides) ~= nil
if was ~= is then
  local n = redis.call('HINCRBY', KEYS[1], ARGV[5], is and 1 or -1)
  if n <= 0 then
    redis.call('HDEL', KEYS[1], ARGV[5])
  end
end
if KEYS[2] then
  if ARGV[3] == '1' then
    redis.call('SADD', KEYS[2], ARGV[1])
  else
    redis.call('SREM', KEYS[2], ARGV[1])
  end
end
return nxt
