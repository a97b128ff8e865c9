-- pes_count.lua: count the permits of a Redisson RPermitExpirableSemaphore
-- (availablePermits, acquiredPermits, getPermits).
-- KEYS[1..3] the permit semaphore's first three (see pes.lua): count,
--         timeout zset, Redisson's channel
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- Expired permits first return to the pool (the new count is published if
-- positive, which wakes latchkey's waiters as Redisson's). Returns
-- {available, held}; permits granted to a waiter count as held.
-- uses fragment/pes.lua
expire_now()
return {tonumber(redis.call('get', count) or '0'), redis.call('zcard', timeout)}
