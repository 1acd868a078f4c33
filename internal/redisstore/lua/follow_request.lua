-- This script is the locked account's side of a follow (follow to a
-- locked account): while the account is locked and the requester
-- neither follows it already nor stands on either side of a block with
-- it, the requester joins its FollowRequests. Reading the lock and
-- writing the request in one step keeps a follow from slipping past an
-- unlock: an unlock clears the flag first, then approves what the set
-- holds (graph_requests.go), so a request is either seen by that
-- approval or made after the flag went, as a plain follow.
--
-- KEYS[1]: the account's profile (Keys.User); KEYS[2]: its Followers;
-- KEYS[3]: its FollowRequests; KEYS[4], KEYS[5]: its Blocks and
-- BlockedBy. All in the account's slot.
-- ARGV[1]: the requester; ARGV[2]: now (ms).
--
-- Reply: OPEN (not locked: follow as usual), FOLLOWS (already a
-- follower), FORBIDDEN (a block stands), REQUESTED (the request stands;
-- a repeated request keeps its first time).
if redis.call('HGET', KEYS[1], F.profile.locked) ~= '1' then return 'OPEN' end
if redis.call('ZSCORE', KEYS[2], ARGV[1]) then return 'FOLLOWS' end
if redis.call('SISMEMBER', KEYS[4], ARGV[1]) == 1 or redis.call('SISMEMBER', KEYS[5], ARGV[1]) == 1 then
  return 'FORBIDDEN'
end
redis.call('ZADD', KEYS[3], 'NX', ARGV[2], ARGV[1])
return 'REQUESTED'
