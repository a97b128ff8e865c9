-- sem_restock.lua: give back to the semaphore the permits of grants whose
-- grace is over (see sem.lua), hand them to the waiters at the head of its
-- queue, and publish the permits then available on Redisson's channel. A
-- client whose call granted permits runs it once their grace is over, so
-- that a grant nobody took is back in the count, whoever reads it, without
-- waiting for another call on the semaphore.
-- KEYS[1..8] the semaphore's (see sem.lua): count, Redisson's channel,
--         queue, deadlines, grants, Hub channel prefix, listeners, turn
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- Returns {back, handed}: the permits that came back, and 1 if some were
-- granted anew (the caller runs it again after their grace), else 0.
-- Running it again changes nothing that it did not find due.
-- uses fragment/sem.lua
-- uses fragment/permits.lua
local back = refresh()
serve(nil)
if back > 0 and available > 0 then
  announce(available)
end
return {back, handed}
