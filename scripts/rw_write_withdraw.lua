-- rw_write_withdraw.lua: take a writer that gave up out of the writers'
-- marker of a Redisson RReadWriteLock (see rw_write_acquire.lua).
-- KEYS[1] latchkey_rwlock_writers:{name}, the writers' marker
-- KEYS[2] lock hash name
-- KEYS[3] redisson_rwlock:{name}, the lock's channel
-- ARGV[1] the writer's entry in the marker
-- ARGV[2] PUBLISH or SPUBLISH
-- When the entry was the last live one, the readers it held back may
-- enter: unless a writer holds the lock (its release will tell them), "1"
-- is published, which wakes every waiter, as a write release does.
-- Returns 1 if the entry was there, else 0.
-- uses fragment/clock.lua
if redis.call('zrem', KEYS[1], ARGV[1]) == 0 then
  return 0
end
redis.call('zremrangebyscore', KEYS[1], '-inf', millis())
if redis.call('zcard', KEYS[1]) == 0 and redis.call('hget', KEYS[2], 'mode') ~= 'write' then
  redis.call(ARGV[2], KEYS[3], '1')
end
return 1
