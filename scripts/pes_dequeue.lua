-- pes_dequeue.lua: take a waiter that gave up out of the permit
-- semaphore's queue, or, if it was granted permits meanwhile, give them
-- back.
-- KEYS[1..8] the permit semaphore's (see pes.lua): count, timeout zset,
--         Redisson's channel, queue, deadlines, Hub channel prefix,
--         listeners, turn
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] the waiter's entry <hub id>/<permits>/<first id in hex> (see
--         pes.lua), or an earlier version's <hub id>/<ids in hex>
-- ARGV[7] how long, in ms, the waiter's Hub may listen on Redisson's
--         channel after the waiter left (see yield.lua)
-- Returns {back, handed}: back 1 if the caller had been granted permits
-- and gave them back, else 0; handed 1 if that granted some to others
-- (see permits.lua).
-- uses fragment/pes.lua
-- uses fragment/permits.lua
local entry = ARGV[6]
listening(listeners, (address(entry)), tonumber(ARGV[7]))
if dequeue(entry) then
  return {0, handed}
end
-- Granted meanwhile: the permits are given back, unless they expired.
local back = 0
each_of(entry, function(id)
  back = back + redis.call('zrem', timeout, id)
end)
if back == 0 then
  return {0, 0}
end
redis.call('incrby', count, back)
refresh()
serve(nil)
announce(available)
return {1, handed}
