-- mutex_force.lua: delete the mutex whoever holds it (ForceUnlock), and
-- grant it to the first waiter in line (see mutex.lua).
-- KEYS[1..7] the mutex's (see mutex_keys.lua): lock hash, fencing counter,
--         queue, deadlines, Redisson's channel, Hub channel prefix, grant
-- KEYS[8] latchkey_lock__forced:{name}, on which the owners forced out are
--         published, space-separated, before the wake-up: a watch tells a
--         force-unlock from a release by it
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] "1" to yield to Redisson's waiters (see mutex.lua)
-- Returns 1 if the lock existed, else 0.
-- uses fragment/mutex_keys.lua
-- uses fragment/mutex.lua
if redis.call('exists', lock) == 0 then
  return 0
end
-- Told before the wake-up, so that a watch hears it first.
redis.call(pub, KEYS[8], table.concat(redis.call('hkeys', lock), ' '))
free(ARGV[6])
return 1
