-- This script counts the intersection of two zsets without sending
-- it over. ZINTERCARD would do the same without building the intersection,
-- but the embedded Redis of development mode (miniredis) lacks it.

return #redis.call('ZINTER', 2, KEYS[1], KEYS[2])
