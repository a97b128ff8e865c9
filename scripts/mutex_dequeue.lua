-- mutex_dequeue.lua: take a waiter that gave up out of the mutex's queue,
-- or, if a release granted it the lock meanwhile, give the lock back.
-- KEYS[1..7] the mutex's (see mutex_keys.lua): lock hash, fencing counter,
--         queue, deadlines, Redisson's channel, Hub channel prefix, grant
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] the waiter's entry <hub id>/<key> (see mutex_keys.lua)
-- A waiter that leaves the head of the queue of a free lock hands the
-- lock to the next in line.
-- Returns 1 if the caller had been granted the lock and gave it back,
-- else 0.
-- uses fragment/mutex_keys.lua
-- uses fragment/mutex.lua
local entry = ARGV[6]
local _, head = leave(entry)
if head then
  if redis.call('exists', lock) == 0 then
    purge()
    grant_head()
  end
  return 0
end
if redis.call('get', grant) ~= entry then
  return 0
end
-- Granted after the waiter gave up: give the lock back at once.
free()
return 1
