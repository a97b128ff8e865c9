-- pes_acquire.lua: take permits of the permit semaphore, or its grant of
-- them, or join its waiter queue (see pes.lua); with ARGV[8], try once,
-- leaving no trace.
-- KEYS[1..8] the permit semaphore's (see pes.lua): count, timeout zset,
--         Redisson's channel, queue, deadlines, Hub channel prefix,
--         listeners, turn
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] waiter entry <hub id>/<permits>/<first id in hex> (see pes.lua);
--         "" for a try
-- ARGV[7] the lease end of the permits (or 922337203685477)
-- ARGV[8] "1" to try once: the caller never queues
-- ARGV[9] how long, in ms, the waiter's Hub may listen on Redisson's
--         channel after the waiter left (see yield.lua)
-- ARGV[10] "1" if the waiter listens there already
-- ARGV[11] the first permit id (16 raw bytes; see each_id in pes.lua)
-- ARGV[12] how many permits
-- Returns {1, 0, handed} when acquired (or its grant taken); {0, ms, rank,
-- handed} when not: ms until the earliest lease ends for the head of the
-- queue (-1 if no held permit has a lease, and for the others), rank the
-- waiter's place in the queue (-1 for a try); {-1, total, handed} when the
-- semaphore exists but has fewer permits in all than asked for (nothing
-- of the caller's changes); handed 1 if the call granted permits to
-- others ahead (see permits.lua).
-- An acquisition is recorded against its request (see once.lua).
-- uses fragment/replay.lua
-- uses fragment/pes.lua
-- uses fragment/permits.lua
-- uses fragment/noted.lua
local entry, lease, first, n = ARGV[6], ARGV[7], ARGV[11], tonumber(ARGV[12])

-- take holds the caller's permits until their lease end.
local function take()
  hold(function(f) each_id(first, n, f) end, lease)
end

-- Granted: the grant is taken with the caller's lease, even past its
-- grace if its permits did not expire yet. One that expired is gone.
if redis.call('zscore', timeout, first) then
  each_id(first, n, function(id)
    redis.call('zadd', timeout, 'xx', lease, id)
  end)
  return once_record(noted({1, 0, 0}, subscribed))
end
local expired = expire()
purge()
local queued = waiting() and redis.call('zscore', deadlines, entry)
if serve(queued and entry or nil, false, take) then
  if expired > 0 then
    announce(available)
  end
  return once_record(noted({1, 0, handed}, subscribed))
end
local total = available + redis.call('zcard', timeout)
if total < n and redis.call('exists', count) == 1 then
  if expired > 0 then
    announce(available)
  end
  return {-1, total, handed}
end
if not queued and available >= n and not (waiting() and redis.call('lindex', queue, '0')) then
  available = redis.call('decrby', count, n)
  take()
  if expired > 0 then
    announce(available)
  end
  return once_record(noted({1, 0, handed}, subscribed))
end
if expired > 0 then
  announce(available)
end
local rank = -1
if ARGV[8] ~= '1' then
  rank = join(entry)
end
local wait = -1
if turn_wait then
  -- Redisson's turn, ahead of the caller, may leave permits to it.
  wait = turn_wait + 1
elseif rank <= 0 then
  -- Only the head (or a single attempt) waits for a lease to end: it
  -- takes the expired permits back, and hands on what it does not need.
  local first = redis.call('zrange', timeout, '0', '0', 'withscores')
  if first[2] and tonumber(first[2]) < never then
    wait = math.max(tonumber(first[2]) - now, 0)
  end
end
return noted({0, wait, rank, handed}, rank < 0)
