-- pes_lease.lua: read or reset the lease of one permit of a Redisson
-- RPermitExpirableSemaphore (getLeaseTime, updateLeaseTime).
-- KEYS[1..3] the permit semaphore's first three (see pes.lua): count,
--         timeout zset, Redisson's channel
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] permit id (16 raw bytes)
-- ARGV[7] the new lease end (or 922337203685477), or "" to only read it
-- Expired permits first return to the pool (the new count is published if
-- positive). Returns -2 if the permit is not held (unknown, released or
-- expired), -1 if it has no lease, else the ms left of its lease (after
-- the update, if any).
-- uses fragment/pes.lua
expire_now()
local score = redis.call('zscore', timeout, ARGV[6])
if not score then
  return -2
end
if ARGV[7] ~= '' then
  score = ARGV[7]
  redis.call('zadd', timeout, score, ARGV[6])
end
score = tonumber(score)
if score >= never then
  return -1
end
return score - now
