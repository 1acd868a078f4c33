-- This script is the post's side of a bookmark, in the post's slot: the
-- viewer joins PostBookmarkers (where the delete job finds the Bookmarks
-- the post is in) and gets the b flag in PostViewers (viewerHasBookmarked,
-- read by a page with the viewer's other flags), or leaves both. A
-- bookmark is written only while the post exists, and only on a post whose
-- PostViewers is kept (pv): postMigrateScript rebuilds a hash without pv
-- from the lists its flags mirror and would drop the b flag. Setting a
-- flag that is set, or removing one that is not, changes nothing: a retry
-- or a repeat is a no-op.
--
-- KEYS: Post, PostViewers, PostBookmarkers. ARGV: the viewer, 'on' or 'off'.
-- Reply: 1 done, 0 the post does not exist, -1 the post has no pv yet.

if ARGV[2] == 'off' then
  redis.call('SREM', KEYS[3], ARGV[1])
  set_flag(KEYS[2], ARGV[1], 'b', false)
  return 1
end
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
if not redis.call('HGET', KEYS[1], F.post.pv) then return -1 end
redis.call('SADD', KEYS[3], ARGV[1])
set_flag(KEYS[2], ARGV[1], 'b', true)
return 1
