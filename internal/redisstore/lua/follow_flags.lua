-- This script tells which of some users a viewer follows, as one short
-- string: the visibility check's read of whether the viewer follows the
-- authors of its batch (post_lock.go), for the lock rule. ZMSCORE alone
-- would answer each follow's score, several times the bytes of a page's
-- other replies for what is one bit an author.
--
-- KEYS[1]: the viewer's Following. ARGV: user ids.
-- Returns one character per id, in order: '1' followed, '0' not.
local scores = redis.call('ZMSCORE', KEYS[1], unpack(ARGV))
local out = {}
for i = 1, #ARGV do
  out[i] = scores[i] and '1' or '0'
end
return table.concat(out)
