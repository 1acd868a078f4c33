-- Cursor positions in lists kept sorted by id, newest (largest) first:
-- the comment lists and the home lists.

-- list_after returns the index in the list at key (of length len) of the
-- first element whose id, read by id_of, is below cursor: where the page
-- after cursor starts. Binary search, so O(log n) LINDEX calls; it also
-- finds the place when the cursor's own element is gone.
local function list_after(key, len, cursor, id_of)
  local lo, hi = 0, len
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    if id_of(redis.call('LINDEX', key, mid)) < cursor then hi = mid else lo = mid + 1 end
  end
  return lo
end
