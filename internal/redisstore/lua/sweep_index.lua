-- This script removes a user from GraphPendingIndex if the entry still has
-- the score the sweeper read: an edit begun since raised it (step 0 writes
-- the index before step 1 writes a pending entry), and then the user stays
-- for the next sweep. The sweeper has seen the user's pending hash empty
-- of anything but running edits just before.
--
-- KEYS: GraphPendingIndex. ARGV: user, score read.

if redis.call('ZSCORE', KEYS[1], ARGV[1]) == ARGV[2] then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 1
end
return 0
