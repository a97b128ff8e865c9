-- mutex_force.lua: delete the mutex whoever holds it (ForceUnlock), and
-- grant it to the first waiter in line (see mutex.lua).
-- KEYS[1..7] the mutex's (see mutex_keys.lua): lock hash, fencing counter,
--         queue, deadlines, Redisson's channel, Hub channel prefix, grant
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] "1" to yield to Redisson's waiters (see mutex.lua)
-- Returns 1 if the lock existed, else 0.
-- uses fragment/mutex_keys.lua
-- uses fragment/mutex.lua
if redis.call('exists', lock) == 0 then
  return 0
end
free(ARGV[6] == '1')
return 1
