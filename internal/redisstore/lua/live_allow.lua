-- This script tells, in the reader's slot, which of the authors of posts
-- announced to a live subscriber the reader's home timeline may show now
-- (homeAllowLib: the reader themself, or followed and not muted), so the
-- live check applies the very rule the page script applies.
--
-- KEYS: Home, HomeMark, Following, Mutes, CelebFollowing (homeKeys; only
-- Following and Mutes are read). ARGV: reader, then the authors.
-- Reply: one 1 (allowed) or 0 per author, in order.

local out = {}
for i = 2, #ARGV do
  if allowed(ARGV[i]) then out[#out + 1] = 1 else out[#out + 1] = 0 end
end
return out
