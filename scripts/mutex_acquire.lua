-- mutex_acquire.lua: take the mutex, or join its waiter queue (see
-- mutex.lua); with try (ARGV[9]), try once, leaving no trace.
-- KEYS[1..7] the mutex's (see mutex_keys.lua): lock hash, fencing counter,
--         queue, deadlines, Redisson's channel, Hub channel prefix, grant
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] owner id <uuid>:<n>
-- ARGV[7] waiter entry <hub id>/<key> (see mutex_keys.lua)
-- ARGV[8] lease in ms
-- ARGV[9] four flags, a character each (see flags.go): the reentry, "1"
--         if the owner may re-enter, "2" if it may, and holds the lock
--         through the caller's handle (a grant to it was taken by the Lock
--         this re-enters), "0" if the id is fresh for this acquisition (so
--         finding it present means a resent request that applied, or a
--         grant, which succeeds again without a second hold); then "1"
--         or "0" for: an earlier attempt of the call may have queued it
--         (one that never queued takes a free lock without a look at the
--         queue); try once, never queueing; the caller heard a Redisson
--         client's release since its latest attempt
-- ARGV[10] the yield in ms: how long the head of the queue leaves a lock
--         that a release yielded to Redisson's waiters (see mutex.lua)
-- Returns {1, token, n} when acquired, re-entered or found granted (the
-- TTL is reset to the lease), n being the owner's holds; {0, pttl, rank,
-- foreign, now} when held by another owner (pttl is -1 if the key has no
-- TTL; rank is the waiter's place in the queue, 0 at the head; foreign is
-- 1 if the holder is not a latchkey owner, whose release will not grant;
-- now is the server's clock in µs, against which the waiter dates a
-- grant's letter: an integer, or its digits as a string), or
-- {0, pttl, -1, 0} for a try.
-- An acquisition by an owner that may re-enter is recorded against its
-- request (see once.lua), so a resend answers as the first run did; one
-- by a fresh id has no record (a resend finds the id holding instead).
-- uses fragment/once.lua
-- A caller that never queued takes a lock that is free, with no turn at
-- it given, before any function is defined: an owner's Lock, re-entrant,
-- looks for its record first. The counter's start and every 256th token
-- need fence.lua's code, below. The lock's PTTL, read first, tells a
-- contended attempt (below) that it is held.
local took, drew, pttl
if once_ttl > 0 then
  -- inline fragment/once_read.lua
end
if not once_rec then
  pttl = redis.call('pttl', KEYS[1])
end
if pttl == -2 and string.byte(ARGV[9], 2) == 48 and redis.call('exists', KEYS[7]) == 0 then
  took = redis.call('hincrby', KEYS[1], ARGV[6], '1')
  redis.call('pexpire', KEYS[1], ARGV[8])
  drew = redis.call('incr', KEYS[2])
  if drew >= 1e15 and drew % 256 ~= 0 then
    if once_ttl > 0 then
      redis.call('set', once_key, once_tag .. string.format('a1,%d,%d', drew, took), 'px', once_px)
    end
    return {1, drew, took}
  end
end
-- uses fragment/mutex_keys.lua
-- uses fragment/inputs.lua
local owner, entry, lease = ARGV[6], ARGV[7], ARGV[8]
-- The flags' characters, read with string.byte: 49 is "1", 48 "0".
local try = string.byte(ARGV[9], 3) == 49
-- A lock held by another owner is the contended attempt: the caller
-- queues (or, trying, is told the holder's PTTL), here too before any
-- function is defined.
-- A resend whose first run applied (the lane holds its record) is
-- answered below instead.
-- One HGETALL reads both whether the owner holds (a field of its own)
-- and the holder's id (the first field), which HGET and HKEYS would.
local holder
if not took and not once_rec and pttl ~= -2 then
  local h = redis.call('hgetall', lock)
  holder = h[1] or ''
  for i = 1, #h, 2 do
    if h[i] == owner then
      holder = nil
    end
  end
end
if holder then
  -- inline fragment/expire_entries.lua
  if try then
    return {0, pttl, -1, 0}
  end
  local e, rank, us, foreign = entry
  -- inline fragment/enqueue.lua
  -- inline fragment/clock_digits.lua
  -- inline fragment/holder_kind.lua
  return {0, pttl, rank, foreign and 1 or 0, us}
end
-- uses fragment/record.lua
if once_rec then
  return once_decode(once_rec)
end
-- uses fragment/fence.lua
if took then
  return once_record({1, fenced(drew), took})
end
local held = pttl ~= -2
-- uses fragment/mutex.lua
if held then
  -- Held by the owner: granted to this call by a release (its letter not
  -- read yet), or to an earlier call of the owner that gave up without
  -- a word (its entry stayed queued), unless the owner holds the lock
  -- through this handle, which took that grant; or, for a fresh id,
  -- acquired by an earlier send of this request. Each is taken as it is,
  -- and not counted twice, with the token drawn then (a new one if the
  -- counter expired since: see fence.lua).
  local g = redis.call('get', grant)
  local mine = g and owner_of(g) == owner
  local reentry = string.sub(ARGV[9], 1, 1)
  if mine and reentry == '2' then
    redis.call('del', grant) -- the Lock this re-enters took it
  elseif reentry == '0' or mine then
    leave(entry)
    if mine then
      redis.call('del', grant)
    end
    redis.call('pexpire', lock, lease)
    return once_record({1, tonumber(redis.call('get', token)) or fence(), tonumber(redis.call('hget', lock, owner))})
  end
end
-- Free. A release that yielded to Redisson's waiters gave the head of the
-- queue its turn (see mutex.lua): until the head takes it, or the grace
-- ends, another latchkey caller queues, told to look again then. The
-- head itself waits until the yield is over, or a Redisson client took
-- the lock and released it: it looks every millisecond meanwhile, and
-- once it finds a Redisson holder it listens on Redisson's channel, and
-- takes the lock when it hears the release (heard, ARGV[9]).
local turn = redis.call('get', grant)
if turn and turn == entry and string.byte(ARGV[9], 4) == 48 then
  if tonumber(ARGV[10]) > grace_ms - redis.call('pttl', grant) then
    return {0, 1, join(entry), 0, micros()}
  end
end
if turn and turn ~= entry then
  local pttl = redis.call('pttl', grant)
  if try then
    return {0, pttl, -1, 0}
  end
  return {0, pttl, join(entry), 0, micros()}
end
if turn then
  redis.call('del', grant)
end
if string.byte(ARGV[9], 2) == 49 then
  leave(entry)
end
local n = redis.call('hincrby', lock, owner, '1')
redis.call('pexpire', lock, lease)
return once_record({1, fence(), n})
