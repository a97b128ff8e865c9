-- pes_add.lua: add a (possibly negative) number of permits to a Redisson
-- RPermitExpirableSemaphore (addPermits).
-- KEYS[1] semaphore name        string: the number of available permits
-- KEYS[2] redisson_sc:{name}
-- ARGV[1] the number to add
-- ARGV[2] PUBLISH or SPUBLISH
-- Creates the key if it is missing. Publishes the number added when it is
-- positive, as Redisson does. Returns the new available count.
-- The count is recorded against its request.
-- uses prelude/once.lua
local done = once_replay()
if done then
  return done
end
local available = redis.call('incrby', KEYS[1], ARGV[1])
if tonumber(ARGV[1]) > 0 then
  redis.call(ARGV[2], KEYS[2], ARGV[1])
end
return once_record(available)
