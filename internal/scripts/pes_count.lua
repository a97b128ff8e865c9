-- pes_count.lua: count the permits of a Redisson RPermitExpirableSemaphore,
-- or set their total (setPermits).
-- KEYS[1] semaphore name        string: the number of available permits
-- KEYS[2] {name}:timeout        zset: permit id (16 raw bytes) -> lease end
-- KEYS[3] redisson_sc:{name}
-- ARGV[1] now, ms since the epoch (client clock)
-- ARGV[2] PUBLISH or SPUBLISH
-- ARGV[3] "" to only count, or the new total: available is set to the total
--         less the permits held (which may make it negative), and the
--         total is published if some are available, as Redisson does
-- Expired permits first return to the pool (the new count is published if
-- positive). Returns {available, held}.
local expired = redis.call('zremrangebyscore', KEYS[2], '-inf', ARGV[1])
if expired > 0 then
  local available = redis.call('incrby', KEYS[1], expired)
  if available > 0 then redis.call(ARGV[2], KEYS[3], available) end
end
local held = redis.call('zcard', KEYS[2])
if ARGV[3] ~= '' then
  local available = tonumber(ARGV[3]) - held
  redis.call('set', KEYS[1], available)
  if available > 0 then redis.call(ARGV[2], KEYS[3], ARGV[3]) end
  return {available, held}
end
return {tonumber(redis.call('get', KEYS[1]) or '0'), held}
