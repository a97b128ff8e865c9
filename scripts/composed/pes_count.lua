-- pes_count.lua: count the permits of a Redisson RPermitExpirableSemaphore
-- (availablePermits, acquiredPermits, getPermits).
-- KEYS[1] semaphore name        string: the number of available permits
-- KEYS[2] {name}:timeout        zset: permit id (16 raw bytes) -> lease end
-- KEYS[3] redisson_sc:{name}
-- ARGV[1] now, ms since the epoch (client clock)
-- ARGV[2] PUBLISH or SPUBLISH
-- Expired permits first return to the pool (the new count is published if
-- positive, which wakes latchkey's waiters as Redisson's). Returns
-- {available, held}; permits granted to a waiter count as held.
local expired = redis.call('zremrangebyscore', KEYS[2], '-inf', ARGV[1])
if expired > 0 then
  local available = redis.call('incrby', KEYS[1], expired)
  if available > 0 then redis.call(ARGV[2], KEYS[3], available) end
end
return {tonumber(redis.call('get', KEYS[1]) or '0'), redis.call('zcard', KEYS[2])}
