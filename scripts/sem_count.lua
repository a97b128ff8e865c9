-- sem_count.lua: the permits available (AvailablePermits): the count, and
-- the permits of grants whose grace is over, which are nobody's although
-- only the next call on the semaphore, or its granter, puts them back in
-- the count (see sem.lua).
-- KEYS[1] semaphore name                   string: the permits available
-- KEYS[2] latchkey_semaphore_grant:{name}  zset: granted entry -> end of its
--                                          grace (ms, server clock)
-- Returns the permits available. Reads only.
-- uses fragment/clock.lua
-- uses fragment/entry.lua
local n = tonumber(redis.call('get', KEYS[1]) or '0')
for _, e in ipairs(redis.call('zrangebyscore', KEYS[2], '0', millis())) do
  n = n + need(e)
end
return n
