-- This script returns {ZCARD, count_sample} of the zset KEYS[1]: ARGV[1]
-- members at most, in runs of ARGV[2] (lib/sample.lua). Redis Cluster's
-- half of common_count.lua: the store asks the other user's list, in its
-- own slot, which of these members it holds.

local card = redis.call('ZCARD', KEYS[1])
return {card, count_sample(KEYS[1], card, tonumber(ARGV[1]), tonumber(ARGV[2]))}
