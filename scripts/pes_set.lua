-- pes_set.lua: change the permit semaphore's permits (addPermits,
-- setPermits, trySetPermits), handing what it frees to the waiters at the
-- head of its queue (see pes.lua).
-- KEYS[1..8] the permit semaphore's (see pes.lua): count, timeout zset,
--         Redisson's channel, queue, deadlines, Hub channel prefix,
--         listeners, turn
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] the change: add (the permits more, or fewer if negative), set
--         (the permits in all, held ones included) or tryset (the permits,
--         only if the semaphore has none set yet)
-- ARGV[7] permits
-- ARGV[8] for tryset, the semaphore's TTL in ms, or 0 for none
-- Returns, for add and set, {available, held, handed}; for tryset, {1,
-- handed} if set, {0, 0} if the semaphore existed; handed being 1 if it
-- granted permits (see permits.lua); or an OVERFLOW error, changing no count but for
-- expired permits come back, if the count, or the total held and
-- available, would leave the range a Lua number holds exactly (see
-- exact.lua).
-- A change is recorded against its request (see once.lua).
-- uses fragment/replay.lua
-- uses fragment/pes.lua
-- uses fragment/permits.lua
-- uses fragment/exact.lua
local mode, arg = ARGV[6], ARGV[7]
if inexact(tonumber(arg)) then
  return overflow()
end
if mode == 'tryset' and not try_set(count, arg, ARGV[8]) then
  return {0, 0}
end
refresh()
local held = redis.call('zcard', timeout)
if mode == 'add' then
  -- Releases and expiries bring the permits held back to the count.
  local after = get() + tonumber(arg)
  if inexact(after) or inexact(after + held) then
    return overflow()
  end
  redis.call('incrby', count, arg)
elseif mode == 'set' then
  redis.call('set', count, tonumber(arg) - held)
end
-- A SET drops the count's TTL, or sets it: the leases follow.
follow(timeout, count)
serve(nil)
if mode == 'tryset' then
  announce(available)
  return once_record({1, handed})
end
-- Redisson publishes the number added, or the new total: what the queue
-- left of it.
if tonumber(arg) > 0 then
  announce(math.min(tonumber(arg), available))
end
return once_record({available, redis.call('zcard', timeout), handed})
