-- sem_release.lua: give permits back to a Redisson RSemaphore.
-- KEYS[1] semaphore name     string: the number of available permits
-- KEYS[2] redisson_sc:{name}
-- ARGV[1] permits to add (> 0)
-- ARGV[2] PUBLISH or SPUBLISH
-- Creates the key if it is missing, publishes the new available count (as
-- Redisson's release does) and returns it, recorded against its request.
-- uses prelude/once.lua
local done = once_replay()
if done then
  return done
end
local available = redis.call('incrby', KEYS[1], ARGV[1])
redis.call(ARGV[2], KEYS[2], available)
return once_record(available)
