-- sem_release.lua: give permits back to the semaphore, handing them to the
-- waiters at the head of its queue (see sem.lua), and publish the permits
-- then available on Redisson's channel.
-- KEYS[1..8] the semaphore's (see sem.lua): count, Redisson's channel,
--         queue, deadlines, grants, Hub channel prefix, listeners, turn
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] permits to release
-- ARGV[7] ms that a release a Redisson client may wait for leaves the
--         permits to it (see yield.lua)
-- Its first step gives back the grants whose grace is over: the Go side
-- drops its client's purge due before it began (see rt.Book.Refreshed).
-- Returns {available, handed}: the permits available after serving the
-- queue, and 1 if it granted some (see permits.lua); an OVERFLOW
-- error, releasing nothing, if the count would leave the range a Lua
-- number holds exactly (see exact.lua).
-- A release is recorded against its request (see once.lua).
-- uses fragment/replay.lua
-- uses fragment/sem.lua
-- uses fragment/permits.lua
-- uses fragment/exact.lua
refresh()
if inexact(get() + tonumber(ARGV[6])) then
  return overflow()
end
redis.call('incrby', count, tonumber(ARGV[6]))
hand_on(tonumber(ARGV[7]))
place_redisson(announce(available))
return once_record({available, handed})
