-- lifetime.lua: how long a semaphore's keys live.
--
-- The keys that hold permits (the grants of a semaphore, the leases of a
-- permit semaphore) live as long as the count. Were such a key to outlive
-- the count, the permits in it would come back into a count created anew
-- when they are returned, and were it to expire first, they would be lost
-- for good; so every script that writes it, or sets the count with SET
-- (which drops its TTL, or sets one), has it follow the count.
-- Reads no KEYS or ARGV. Defines follow(key, count) and
-- try_set(count, n, ttl).

-- follow gives key, a zset, the TTL of count: the same ms left, or none.
-- A TTL is taken off by writing the zset anew rather than with PERSIST,
-- which the least-privilege ACL in the latchkey package doc does not
-- grant; it is rare (SetPermits on a semaphore that had a TTL).
local function follow(key, count)
  local ttl = redis.call('pttl', count)
  if ttl > 0 then
    redis.call('pexpire', key, ttl)
  elseif ttl == -1 and redis.call('pttl', key) > 0 then
    local members = redis.call('zrange', key, '0', '-1', 'withscores')
    redis.call('del', key)
    for i = 1, #members, 2 do
      redis.call('zadd', key, members[i + 1], members[i])
    end
  end
end

-- try_set sets count to n if it does not exist, to expire in ttl ms
-- unless ttl is 0 (Redisson's trySetPermits), and reports whether it did.
local function try_set(count, n, ttl)
  if tonumber(ttl) > 0 then
    return redis.call('set', count, n, 'nx', 'px', ttl) ~= false
  end
  return redis.call('set', count, n, 'nx') ~= false
end
