-- This script spends a password-reset token and sets the new password in
-- one step, in the user's slot: a token works once even when two resets
-- race, and a password is never set by a token that was not spent.
--
-- KEYS: the user's reset token (Keys.MailToken), the profile (Keys.User).
-- ARGV: the token's hash, now (ms), the new password hash.
-- Returns 1 when the password was set, 0 when the token is unknown, used,
-- expired or for an account that is gone.

local t = redis.call('HMGET', KEYS[1], 'h', 'x')
if not t[1] or t[1] ~= ARGV[1] or tonumber(t[2]) <= tonumber(ARGV[2]) then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[2], F.profile.pw, ARGV[3])
return 1
