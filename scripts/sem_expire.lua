-- sem_expire.lua: set a semaphore, or a permit semaphore, to expire
-- (Expire): Redisson's keys and latchkey's beside them.
-- KEYS[1] semaphore name     string: the permits available
-- KEYS[2] the keys that hold permits: the semaphore's grants
--         (latchkey_semaphore_grant:{name}), the permit semaphore's leases
--         ({name}:timeout); they follow the count from then on (see
--         follow.lua)
-- KEYS[3] latchkey_semaphore_queue:{name}     list of waiter entries
-- KEYS[4] latchkey_semaphore_timeout:{name}   zset: entry -> deadline
-- KEYS[5] latchkey_semaphore_listeners:{name} zset: notes of latchkey's Hubs
-- KEYS[6] latchkey_semaphore_turn:{name}      set during Redisson's turn
-- ARGV[1] ms from now
-- The count, the keys that hold permits and the queue's expire in ARGV[1]
-- ms; the notes (KEYS[5] and KEYS[6]), with short lives of their own, no
-- later. The queue's keys expire together, so that neither outlives the
-- other; a waiter whose entry expired joins the queue again with its next
-- attempt.
-- Returns 1 if one of KEYS[1..4] existed, else 0.
local ms, set = tonumber(ARGV[1]), 0
for i = 1, 4 do
  set = math.max(set, redis.call('pexpire', KEYS[i], ms))
end
for i = 5, 6 do
  local ttl = redis.call('pttl', KEYS[i])
  if ttl == -1 or ttl > ms then
    redis.call('pexpire', KEYS[i], ms)
  end
end
return set
