-- listeners.lua: notes of latchkey's Hubs that may listen on Redisson's
-- channel of a semaphore (see yield.lua), in a zset of Hub id -> until
-- when (ms, the clients' clocks, which are taken to agree within a
-- Hub's linger).
-- Reads ARGV[1] (see inputs.lua). Defines listening(key, hub, ms).
-- uses fragment/numbers.lua

-- listening notes in the zset key that the Hub hub may listen for ms from
-- now. A Hub new to the zset also drops the notes that ran out, and gives
-- the zset a life of 30 times ms from then: notes are read by their
-- scores, and a steady set of Hubs keeps the zset a while.
local function listening(key, hub, ms)
  if redis.call('zadd', key, now + ms, hub) == 1 then
    redis.call('zremrangebyscore', key, '-inf', now)
    redis.call('pexpire', key, 30 * ms)
  end
end
