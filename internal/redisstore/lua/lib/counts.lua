-- set_count writes a post's counter field (nlikes, ncomments, nreposts)
-- to n, the size of the set or list it counts, read in the same script as
-- the change: the counter is set, never incremented, so it is exact after
-- every write whatever it was before, and a post whose counters were never
-- written (older data) gets each on its first change. A post hash that is
-- gone (deleted) is not brought back.
local function set_count(post, field, n)
  if redis.call('EXISTS', post) == 1 then
    redis.call('HSET', post, field, n)
  end
end

-- COUNTERS are a post's counter fields, in the order of the sizes they
-- count: Likers, PostComments, PostReposts.
local COUNTERS = {F.post.nlikes, F.post.ncomments, F.post.nreposts}
