-- sem_acquire.lua: take permits of the semaphore, or its grant of them, or
-- join its waiter queue (see sem.lua); with ARGV[8], try once, leaving no
-- trace.
-- KEYS[1..8] the semaphore's (see sem.lua): count, Redisson's channel,
--         queue, deadlines, grants, Hub channel prefix, listeners, turn
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] waiter entry <hub id>/<permits>/<key> (see sem.lua); "" for a try
-- ARGV[7] permits to acquire
-- ARGV[8] "1" to try once: the caller never queues
-- ARGV[9] how long, in ms, the waiter's Hub may listen on Redisson's
--         channel after the waiter left (see yield.lua)
-- ARGV[10] "1" if the waiter listens there already
-- Returns {1, available, handed} when acquired (or its grant taken); {0,
-- rank, retry, handed} when not: rank is the waiter's place in the queue,
-- 0 at the head (-1 for a try), and retry the ms until the grace of a
-- grant not taken yet ends, which may bring its permits back to the head,
-- or Redisson's waiters' turn ends, or -1; handed 1 if the call granted
-- permits to others ahead (see permits.lua).
-- An acquisition is recorded against its request (see once.lua), so a
-- resend answers as the first run did.
-- uses fragment/replay.lua
-- uses fragment/sem.lua
-- uses fragment/permits.lua
-- uses fragment/noted.lua
local entry, n = ARGV[6], tonumber(ARGV[7])

-- Granted: the grant is taken, even past its grace if nobody took it
-- back yet. One taken back is gone: the waiter queues again.
if granting and entry ~= '' and redis.call('zrem', grants, entry) == 1 then
  return once_record(noted({1, get(), 0}, subscribed))
end
refresh()
local queued = waiting() and redis.call('zscore', deadlines, entry)
if serve(queued and entry or nil) then
  return once_record(noted({1, available, handed}, subscribed))
end
if not queued and available >= n and not (waiting() and redis.call('lindex', queue, '0')) then
  return once_record(noted({1, redis.call('decrby', count, n), handed}, subscribed))
end
if ARGV[8] == '1' then
  return noted({0, -1, -1, handed}, true)
end
local rank, retry = join(entry), -1
if turn_wait then
  -- Redisson's turn, ahead of the caller, may leave permits to it.
  retry = turn_wait + 1
elseif rank == 0 and granting then
  -- Grants not taken yet may come back to the head when their grace ends.
  local first = redis.call('zrangebyscore', grants, '0', '+inf', 'withscores', 'limit', '0', '1')
  if first[2] then
    retry = math.max(tonumber(first[2]) - millis(), 0) + 1
  end
end
return {0, rank, retry, handed}
