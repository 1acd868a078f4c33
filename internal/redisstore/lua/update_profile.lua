-- This script changes fields of an existing profile (updateProfile) and
-- returns the pictures the change replaces or removes, so that the caller
-- deletes their files. Reading the old pictures and writing the new ones
-- in one step gives each of two racing updates the picture it replaced:
-- no file is deleted twice or left behind. HSET on a missing hash would
-- create a profile for a user that does not exist: nothing is written
-- then.
--
-- KEYS[1]: the profile hash (Keys.User).
-- ARGV[1]: n, the number of fields set; ARGV[2 .. 2n+1]: field, value
-- pairs; ARGV[2n+2 ..]: the fields removed.
-- Returns false for a missing profile; else { old avatar, old header },
-- each '' unless the call sets or removes that field and it was set.
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
local n = tonumber(ARGV[1])
local touched = {}
for i = 2, 2 * n + 1, 2 do touched[ARGV[i]] = true end
for i = 2 * n + 2, #ARGV do touched[ARGV[i]] = true end
local old = {}
for i, f in ipairs({ F.profile.avatar, F.profile.header }) do
  old[i] = ''
  if touched[f] then old[i] = redis.call('HGET', KEYS[1], f) or '' end
end
if n > 0 then redis.call('HSET', KEYS[1], unpack(ARGV, 2, 2 * n + 1)) end
if #ARGV > 2 * n + 1 then redis.call('HDEL', KEYS[1], unpack(ARGV, 2 * n + 2)) end
return old
