-- pes_release.lua: release permits of a Redisson RPermitExpirableSemaphore.
-- KEYS[1] semaphore name        string: the number of available permits
-- KEYS[2] {name}:timeout        zset: permit id (16 raw bytes) -> lease end
-- KEYS[3] redisson_sc:{name}
-- ARGV[1] now, ms since the epoch (client clock)
-- ARGV[2] PUBLISH or SPUBLISH
-- ARGV[3] "1": all or nothing (any id unknown or expired releases none);
--         "0": release whichever ids are held
-- ARGV[4..] permit ids (16 raw bytes each)
-- Expired permits first return to the pool (the new count is published if
-- positive). Returns how many permits were released; publishes the new
-- count after releasing one permit, and the number released after
-- releasing several, as Redisson does.
-- A release is recorded against its request.
-- uses prelude/once.lua
local done = once_replay()
if done then
  return done
end
local expired = redis.call('zremrangebyscore', KEYS[2], '-inf', ARGV[1])
if expired > 0 then
  local available = redis.call('incrby', KEYS[1], expired)
  if available > 0 then redis.call(ARGV[2], KEYS[3], available) end
end
if ARGV[3] == '1' then
  for i = 4, #ARGV do
    if not redis.call('zscore', KEYS[2], ARGV[i]) then return 0 end
  end
end
local released = 0
for i = 4, #ARGV do
  released = released + redis.call('zrem', KEYS[2], ARGV[i])
end
if released == 0 then
  return 0
end
local available = redis.call('incrby', KEYS[1], released)
if released > 1 then
  redis.call(ARGV[2], KEYS[3], released)
elseif available > 0 then
  redis.call(ARGV[2], KEYS[3], available)
end
return once_record(released)
