-- mutex_delete.lua: delete every key of a mutex that nobody holds (its
-- fencing counter, its waiter queue, a turn at the free lock), as
-- Redisson's RObject.delete. Waiters still queued, a moment while the
-- lock is free, are told to look again, and queue anew.
-- KEYS[1..7] the mutex's (see mutex_keys.lua): lock hash, fencing counter,
--         queue, deadlines, Redisson's channel, Hub channel prefix, grant
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- Returns -1 if the lock is held (nothing is deleted), 1 if a key
-- existed, else 0. A counter deleted starts again from the server's clock
-- (see fence.lua), so tokens keep increasing.
-- uses fragment/mutex_keys.lua
-- uses fragment/mutex_entry.lua
-- uses fragment/queue.lua
if redis.call('exists', lock) == 1 then
  return -1
end
for _, e in ipairs(redis.call('lrange', queue, '0', '-1')) do
  tell(e, '')
end
if redis.call('del', token, queue, deadlines, grant) == 0 then
  return 0
end
redis.call(pub, shared, '0')
return 1
