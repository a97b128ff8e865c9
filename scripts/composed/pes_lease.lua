-- pes_lease.lua: read or reset the lease of one permit of a Redisson
-- RPermitExpirableSemaphore (getLeaseTime, updateLeaseTime).
-- KEYS[1] semaphore name        string: the number of available permits
-- KEYS[2] {name}:timeout        zset: permit id (16 raw bytes) -> lease end
-- KEYS[3] redisson_sc:{name}
-- ARGV[1] now, ms since the epoch (client clock)
-- ARGV[2] PUBLISH or SPUBLISH
-- ARGV[3] permit id (16 raw bytes)
-- ARGV[4] the new lease end (or 922337203685477), or "" to only read it
-- Expired permits first return to the pool (the new count is published if
-- positive). Returns -2 if the permit is not held (unknown, released or
-- expired), -1 if it has no lease, else the ms left of its lease (after
-- the update, if any).
local expired = redis.call('zremrangebyscore', KEYS[2], '-inf', ARGV[1])
if expired > 0 then
  local available = redis.call('incrby', KEYS[1], expired)
  if available > 0 then redis.call(ARGV[2], KEYS[3], available) end
end
local score = redis.call('zscore', KEYS[2], ARGV[3])
if not score then
  return -2
end
if ARGV[4] ~= '' then
  score = ARGV[4]
  redis.call('zadd', KEYS[2], score, ARGV[3])
end
score = tonumber(score)
if score >= 922337203685477 then
  return -1
end
return score - tonumber(ARGV[1])
