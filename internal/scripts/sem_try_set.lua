-- sem_try_set.lua: set the permits of a Redisson RSemaphore or
-- RPermitExpirableSemaphore only if it has none set yet (trySetPermits).
-- KEYS[1] semaphore name     string: the number of available permits
-- KEYS[2] redisson_sc:{name}
-- ARGV[1] permits (>= 0)
-- ARGV[2] PUBLISH or SPUBLISH
-- Returns 1 if the key was absent and is now set (the count is published),
-- 0 if it already existed (nothing changes).
-- Setting is recorded against its request: a resend still answers 1.
-- uses prelude/once.lua
local done = once_replay()
if done then
  return done
end
if redis.call('set', KEYS[1], ARGV[1], 'nx') then
  redis.call(ARGV[2], KEYS[2], ARGV[1])
  return once_record(1)
end
return 0
