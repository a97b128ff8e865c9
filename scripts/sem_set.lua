-- sem_set.lua: change the semaphore's count (AddPermits, SetPermits,
-- TrySetPermits), handing what it frees to the waiters at the head of its
-- queue (see sem.lua).
-- KEYS[1..8] the semaphore's (see sem.lua): count, Redisson's channel,
--         queue, deadlines, grants, Hub channel prefix, listeners, turn
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] the change: add (the count goes up by the permits, which may be
--         negative), set (the count becomes the permits) or tryset (the
--         same, only if the semaphore has no count yet)
-- ARGV[7] permits
-- ARGV[8] for tryset, the semaphore's TTL in ms, or 0 for none
-- Returns {v, handed}: v, for add and set, the permits available after
-- serving the queue, for tryset 1 if set, 0 if the semaphore existed;
-- handed 1 if it granted permits (see permits.lua); or an OVERFLOW
-- error, changing nothing, if the count would leave the range a Lua number
-- holds exactly (see exact.lua).
-- A change is recorded against its request (see once.lua).
-- uses fragment/replay.lua
-- uses fragment/sem.lua
-- uses fragment/permits.lua
-- uses fragment/exact.lua
local mode, n = ARGV[6], tonumber(ARGV[7])
local v = n
if mode == 'add' then
  v = get() + n
end
if inexact(v) then
  return overflow()
end
purge()
if mode == 'tryset' then
  if not try_set(count, n, ARGV[8]) then
    return {0, 0}
  end
else
  redis.call('set', count, v)
end
-- A SET drops the count's TTL, or sets it: the grants follow.
follow(grants, count)
restock()
serve(nil)
if mode == 'tryset' then
  announce(available)
  return once_record({1, handed})
end
-- Nobody can take fewer than one permit, and Redisson's listeners
-- reject a negative count.
if available > 0 then
  announce(available)
end
return once_record({available, handed})
