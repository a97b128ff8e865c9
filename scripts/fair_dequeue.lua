-- fair_dequeue.lua: take a waiter that gave up out of a Redisson fair
-- lock's queue, waking the next waiter if it was first, or, if it was
-- granted the lock meanwhile, give the lock back (see fair_decide.lua).
-- KEYS[1..8] the fair lock's (see fair_state.lua): lock hash, Redisson's
--         queue, Redisson's deadlines, heartbeats, Redisson's channel
--         prefix, grant, Hub channel prefix, fencing counter
-- ARGV[1..5] now, PUBLISH or SPUBLISH, liveness timeout, grace, counted
--         (see inputs.lua)
-- ARGV[6..8] owner id, lease, Redisson's wait timeout (see fair_state.lua)
-- ARGV[9] the caller's Hub id (see fair_acquire.lua)
-- ARGV[10] the caller's letter key (see fair_acquire.lua)
-- Returns 1 if the owner was queued and is removed, or had been granted
-- the lock and gives it back; 0 otherwise.
-- uses fragment/once.lua
-- uses fragment/fair_state.lua
-- uses fragment/replay.lua
-- uses fragment/fair_decide.lua
-- uses fragment/fair_write.lua
read()
if ARGV[9] ~= '' then
  hub[owner], key[owner] = ARGV[9], ARGV[10]
end
local before = q[1]
local dequeued = 0
local i = indexOf(owner)
if i then
  leave(i, true)
  dequeued = 1
end
deadline[owner], heartbeat[owner] = nil, nil
if granted then
  dequeued = 1 -- granted after its waiter gave up: given back below
end
settle(before)
if granted then
  free()
  return commit(dequeued, delete)
end
return commit(dequeued)
