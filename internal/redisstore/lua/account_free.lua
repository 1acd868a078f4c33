-- This script is the last step of an account's purge, in the {acct} slot:
-- the name and the e-mail address go from the indexes where they still
-- point at the deleted id, so a registration may take them again.
-- Idempotent: a second run finds nothing pointing at the id.
--
-- KEYS: Names, Emails. ARGV: id, lower-cased name, lower-cased e-mail.

if ARGV[2] ~= '' and redis.call('HGET', KEYS[1], ARGV[2]) == ARGV[1] then redis.call('HDEL', KEYS[1], ARGV[2]) end
if ARGV[3] ~= '' and redis.call('HGET', KEYS[2], ARGV[3]) == ARGV[1] then redis.call('HDEL', KEYS[2], ARGV[3]) end
return 'OK'
