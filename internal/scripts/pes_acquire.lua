-- pes_acquire.lua: take permits of a Redisson RPermitExpirableSemaphore.
-- KEYS[1] semaphore name        string: the number of available permits
-- KEYS[2] {name}:timeout        zset: permit id (16 raw bytes) -> lease end
--                               (ms, client clock; 922337203685477 = never)
-- KEYS[3] redisson_sc:{name}
-- ARGV[1] now, ms since the epoch (client clock)
-- ARGV[2] PUBLISH or SPUBLISH
-- ARGV[3] lease end of the new permits, or 922337203685477
-- ARGV[4..] one new permit id per permit wanted
-- Expired permits first return to the pool; if some are left over after
-- this request, the count is published. Returns {1, 0} when the permits
-- were taken (or already were, by a repeat of this request), {0, ms} when
-- too few are available: ms until the earliest lease ends, -1 if no held
-- permit has a lease; {-1, total} when the semaphore exists but has fewer
-- permits in all, available and held, than asked for (nothing changes:
-- only a change of its permits could satisfy the request). An acquisition
-- is recorded against its request.
-- uses prelude/once.lua
local done = once_replay()
if done then
  return done
end
local expired = redis.call('zremrangebyscore', KEYS[2], '-inf', ARGV[1])
if expired > 0 then
  redis.call('incrby', KEYS[1], expired)
end
local n = #ARGV - 3
local available = tonumber(redis.call('get', KEYS[1]) or '0')
local taken = redis.call('zscore', KEYS[2], ARGV[4]) ~= false
if not taken and available < n then
  local total = available + redis.call('zcard', KEYS[2])
  if total < n and redis.call('exists', KEYS[1]) == 1 then
    if expired > 0 and available > 0 then
      redis.call(ARGV[2], KEYS[3], available)
    end
    return {-1, total}
  end
end
if not taken and available >= n then
  available = redis.call('decrby', KEYS[1], n)
  for i = 4, #ARGV do
    redis.call('zadd', KEYS[2], ARGV[3], ARGV[i])
  end
  local ttl = redis.call('pttl', KEYS[1])
  if ttl > 0 then redis.call('pexpire', KEYS[2], ttl) end
  taken = true
end
if expired > 0 and available > 0 then
  redis.call(ARGV[2], KEYS[3], available)
end
if taken then
  return once_record({1, 0})
end
local first = redis.call('zrange', KEYS[2], 0, 0, 'withscores')
if first[2] and tonumber(first[2]) < 922337203685477 then
  return {0, tonumber(first[2]) - tonumber(ARGV[1])}
end
return {0, -1}
