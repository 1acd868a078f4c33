-- This script is the post's side of a pin, in the post's slot: the post
-- hash's pinned flag (Post.pinned, read with the post's other mutable
-- fields), set or removed while the post exists, so a pin never brings a
-- deleted post's hash back.
--
-- KEYS: Post. ARGV: 'on' or 'off'. Reply: 1 done, 0 the post does not exist.

if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if ARGV[1] == 'on' then
  redis.call('HSET', KEYS[1], F.post.pinned, '1')
else
  redis.call('HDEL', KEYS[1], F.post.pinned)
end
return 1
