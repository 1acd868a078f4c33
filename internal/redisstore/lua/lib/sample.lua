-- Counting the members two following lists share within a fixed amount
-- of work, whatever their lengths (CommonFollowing's total).

-- count_sample returns the members of the zset key (card members) that
-- such a count reads: all of them when it holds at most n, so the count
-- is exact; else n of them, in runs of run consecutive members, one run in
-- each of n/run equal stretches of the zset, so the count is an estimate
-- that stays the same while the list does. A run's place in its stretch
-- follows the golden-ratio sequence rather than the stretch's start, so a
-- list whose shared members recur at some period is not sampled in step
-- with it. n is a multiple of run; n/run ZRANGEs at most.
local function count_sample(key, card, n, run)
  if card <= n then return redis.call('ZRANGE', key, 0, -1) end
  local out, runs = {}, n / run
  local stretch = card / runs
  for i = 0, runs - 1 do
    local jitter = (i * 0.6180339887498949) % 1
    local r = math.floor(i * stretch + jitter * (stretch - run))
    for _, m in ipairs(redis.call('ZRANGE', key, r, r + run - 1)) do out[#out + 1] = m end
  end
  return out
end
