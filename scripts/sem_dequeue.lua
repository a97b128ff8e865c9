-- sem_dequeue.lua: take a waiter that gave up out of the semaphore's
-- queue, or, if it was granted permits meanwhile, give them back.
-- KEYS[1..8] the semaphore's (see sem.lua): count, Redisson's channel,
--         queue, deadlines, grants, Hub channel prefix, listeners, turn
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] the waiter's entry <hub id>/<permits>/<key> (see sem.lua)
-- ARGV[7] how long, in ms, the waiter's Hub may listen on Redisson's
--         channel after the waiter left (see yield.lua)
-- A waiter that leaves the head lets those behind it have what it could
-- not use.
-- Returns {back, handed}: back 1 if the caller had been granted permits
-- and gave them back, else 0; handed 1 if that granted some to others
-- (see permits.lua).
-- uses fragment/sem.lua
-- uses fragment/permits.lua
local entry = ARGV[6]
listening(listeners, (address(entry)), tonumber(ARGV[7]))
if dequeue(entry) then
  return {0, handed}
end
if not (granting and redis.call('zrem', grants, entry) == 1) then
  return {0, 0} -- none, or taken back already
end
redis.call('incrby', count, need(entry))
refresh()
serve(nil)
if available > 0 then
  announce(available)
end
return {1, handed}
