-- sem_drain.lua: take every available permit of a Redisson RSemaphore.
-- KEYS[1] semaphore name     string: the number of available permits
-- Sets a positive count to 0 and returns it; returns 0 and changes nothing
-- when the count is zero, negative (Redisson would reset it to 0, creating
-- permits) or missing. Publishes nothing, as Redisson's drainPermits.
-- What it took is recorded against its request.
-- uses fragment/replay.lua
local available = tonumber(redis.call('get', KEYS[1]) or '0')
if available <= 0 then
  return 0
end
redis.call('set', KEYS[1], '0')
return once_record(available)
