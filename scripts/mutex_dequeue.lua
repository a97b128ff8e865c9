-- mutex_dequeue.lua: take a waiter that gave up out of the mutex's queue,
-- or, if a release granted it the lock meanwhile, give the lock back.
-- KEYS[1..7] the mutex's (see mutex_keys.lua): lock hash, fencing counter,
--         queue, deadlines, Redisson's channel, Hub channel prefix, grant
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] the waiter's entry <hub id>/<key> (see mutex_keys.lua)
-- ARGV[7] "1" to yield to Redisson's waiters (see mutex.lua)
-- A waiter that leaves the head of the queue of a free lock hands the
-- lock on, its turn at it included.
-- Returns 1 if the caller had been granted the lock and gave it back,
-- else 0.
-- uses fragment/mutex_keys.lua
-- uses fragment/mutex.lua
local entry, yield = ARGV[6], ARGV[7]
local _, head = leave(entry)
-- The grant key names the waiter for a grant, and for its turn after
-- Redisson's waiters, who may hold the lock now: only a lock the waiter's
-- owner holds is its grant.
local named = redis.call('get', grant) == entry
if named and redis.call('hexists', lock, owner_of(entry)) == 1 then
  -- Granted after the waiter gave up: give the lock back at once.
  free(yield)
  return 1
end
if named then
  redis.call('del', grant) -- its turn
end
if (head or named) and redis.call('exists', lock) == 0 then
  hand_on(yield)
end
return 0
