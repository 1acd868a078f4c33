-- This script spends an address-confirmation token and writes the
-- confirmed address into the profile, marked verified, in one step in the
-- user's slot: the token works once, and only for the address it was
-- mailed to.
--
-- KEYS: the user's confirmation token (Keys.MailToken), the profile
-- (Keys.User). ARGV: the token's hash, now (ms), the address the token
-- names (as stored in the token).
-- Returns the profile's previous address, or false when the token is
-- unknown, used, expired, for another address, or the account is gone.

local t = redis.call('HMGET', KEYS[1], 'h', 'x', 'e')
if not t[1] or t[1] ~= ARGV[1] or tonumber(t[2]) <= tonumber(ARGV[2]) or t[3] ~= ARGV[3] then return false end
local old = redis.call('HGET', KEYS[2], F.profile.email)
if not old then return false end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[2], F.profile.email, ARGV[3], F.profile.ev, '1')
return old
