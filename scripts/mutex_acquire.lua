-- mutex_acquire.lua: take the mutex, or join its waiter queue (see
-- mutex.lua); with ARGV[11], try once, leaving no trace.
-- KEYS[1..7] the mutex's (see mutex_keys.lua): lock hash, fencing counter,
--         queue, deadlines, Redisson's channel, Hub channel prefix, grant
-- ARGV[1..5] now, PUBLISH or SPUBLISH, queue entry life, grace, counted
--         (see inputs.lua)
-- ARGV[6] owner id <uuid>:<n>
-- ARGV[7] waiter entry <hub id>/<key> (see mutex_keys.lua)
-- ARGV[8] lease in ms
-- ARGV[9] "1": the owner may re-enter; "2": it may, and holds the lock
--         through the caller's handle, so that a grant to it was taken by
--         the Lock this re-enters; "0": the id is fresh for this one
--         acquisition, so finding it present means a resent request that
--         was applied before, or a grant, which succeeds again without a
--         second hold
-- ARGV[10] "1" if an earlier attempt of the call may have queued it: a
--         caller that never queued takes a free lock without a look at the
--         queue (the fast path)
-- ARGV[11] "1" to try once: the caller never queues
-- ARGV[12] "1" if the caller heard a Redisson client's release since its
--         latest attempt
-- ARGV[13] the yield in ms: how long the head of the queue leaves a lock
--         that a release yielded to Redisson's waiters (see mutex.lua)
-- Returns {1, token, n} when acquired, re-entered or found granted (the
-- TTL is reset to the lease), n being the owner's holds; {0, pttl, rank,
-- foreign, now} when held by another owner (pttl is -1 if the key has no
-- TTL; rank is the waiter's place in the queue, 0 at the head; foreign is
-- 1 if the holder is not a latchkey owner, whose release will not grant;
-- now is the server's clock in µs, against which the waiter dates a
-- grant's letter), or {0, pttl, -1, 0} for a try.
-- An acquisition by an owner that may re-enter is recorded against its
-- request (see once.lua), so a resend answers as the first run did; one
-- by a fresh id has no record (a resend finds the id holding instead).
-- uses fragment/once.lua
-- A caller that never queued takes a lock that is free, with no turn at
-- it given, before any function is defined: an owner's Lock, re-entrant,
-- looks for its record first. The counter's start and every 256th token
-- need fence.lua's code, below.
local took, drew
if once_ttl > 0 then
  -- inline fragment/once_read.lua
end
if ARGV[10] ~= '1' and not once_rec and
    redis.call('exists', KEYS[1], KEYS[7]) == 0 then
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
-- uses fragment/replay.lua
-- uses fragment/mutex_keys.lua
local owner, entry, lease, reentry = ARGV[6], ARGV[7], ARGV[8], ARGV[9]
-- uses fragment/fence.lua
if took then
  return once_record({1, fenced(drew), took})
end
local held = redis.call('exists', lock) == 1
-- uses fragment/mutex.lua
if held then
  if not redis.call('hget', lock, owner) then
    purge()
    local pttl = redis.call('pttl', lock)
    if ARGV[11] == '1' then
      return {0, pttl, -1, 0}
    end
    local rank = join(entry)
    return {0, pttl, rank, foreign_holder() and 1 or 0, micros()}
  end
  -- Held by the owner: granted to this call by a release (its letter not
  -- read yet), or to an earlier call of the owner that gave up without
  -- a word (its entry stayed queued), unless the owner holds the lock
  -- through this handle, which took that grant; or, for a fresh id,
  -- acquired by an earlier send of this request. Each is taken as it is,
  -- and not counted twice, with the token drawn then (a new one if the
  -- counter expired since: see fence.lua).
  local g = redis.call('get', grant)
  local mine = g and owner_of(g) == owner
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
-- takes the lock when it hears the release (ARGV[12]).
local turn = redis.call('get', grant)
if turn and turn == entry and ARGV[12] ~= '1' then
  if tonumber(ARGV[13]) > grace - redis.call('pttl', grant) then
    return {0, 1, join(entry), 0, micros()}
  end
end
if turn and turn ~= entry then
  local pttl = redis.call('pttl', grant)
  if ARGV[11] == '1' then
    return {0, pttl, -1, 0}
  end
  return {0, pttl, join(entry), 0, micros()}
end
if turn then
  redis.call('del', grant)
end
if ARGV[10] == '1' then
  leave(entry)
end
local n = redis.call('hincrby', lock, owner, '1')
redis.call('pexpire', lock, lease)
return once_record({1, fence(), n})
