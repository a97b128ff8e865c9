-- pes_release.lua: release permits of the permit semaphore by id, handing
-- them to the waiters at the head of its queue (see pes.lua).
-- KEYS[1..8] the permit semaphore's (see pes.lua): count, timeout zset,
--         Redisson's channel, queue, deadlines, Hub channel prefix,
--         listeners, turn
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] "1": all or nothing; "0": whichever are held
-- ARGV[7] ms that a release a Redisson client may wait for leaves the
--         permits to it (see yield.lua)
-- ARGV[8..] permit ids (16 raw bytes each)
-- Its first step gives back the grants whose grace is over: the Go side
-- drops its client's purge due before it began (see rt.Book.Refreshed).
-- Returns {released, handed}: how many were released, and 1 if that
-- granted permits to waiters (see permits.lua).
-- A release is recorded against its request (see once.lua).
-- uses fragment/replay.lua
-- uses fragment/pes.lua
-- uses fragment/permits.lua
refresh()
if ARGV[6] == '1' then
  for i = 8, #ARGV do
    if not redis.call('zscore', timeout, ARGV[i]) then
      return {0, 0}
    end
  end
end
local released = 0
for i = 8, #ARGV do
  released = released + redis.call('zrem', timeout, ARGV[i])
end
if released == 0 then
  return {0, 0}
end
redis.call('incrby', count, released)
hand_on(tonumber(ARGV[7]))
-- Redisson publishes the new count after releasing one permit, and the
-- number released after releasing several: what the queue left of it.
local heard
if released > 1 then
  heard = announce(math.min(released, available))
else
  heard = announce(available)
end
place_redisson(heard)
return once_record({released, handed})
