-- mutex_take_free.lua: the first try of a plain Lock or TryLock: take the
-- mutex if it is free, with only the keys and arguments that takes (see
-- mutex_acquire.lua, whose fast path it is). It never queues.
-- KEYS[1] lock hash, KEYS[2] fencing counter, KEYS[3] grant (see
--         mutex_keys.lua)
-- ARGV[1] owner id <uuid>:<n>, fresh for this one acquisition
-- ARGV[2] lease in ms
-- Returns {1, token, 1} when acquired, or found acquired by an earlier
-- send of this request (the TTL is reset to the lease; the token is the
-- one drawn then, or a new one if the counter expired since); {0, pttl}
-- when the lock is held, or a turn at it was given (pttl is how long that
-- lasts, -1 if the key has no TTL).
-- A fresh id needs no request record (see mutex_acquire.lua): a resend
-- finds the id holding.
local lock, token, grant = KEYS[1], KEYS[2], KEYS[3]
local owner, lease = ARGV[1], ARGV[2]
-- clock.lua: the server's clock, read once per script (TIME), so that
-- every use in one run sees the same instant.
-- Reads no KEYS or ARGV. Defines micros() and millis(): the server's clock
-- in microseconds and in milliseconds since the epoch.
local clock

local function micros()
  if not clock then
    local t = redis.call('time')
    clock = tonumber(t[1]) * 1000000 + tonumber(t[2])
  end
  return clock
end

local function millis()
  return math.floor(micros() / 1000)
end
-- fence.lua: a lock's fencing token: the mutex's (RFencedLock's counter),
-- a fair lock's or a write lock's (latchkey's own counters).
-- Reads the local token (the counter's key), which the script, or the
-- fragment that names its KEYS (mutex_keys.lua, fair_state.lua), defines
-- before it.
-- Defines fence().
-- uses fragment/clock.lua

-- fence returns the next fencing token. A counter that is missing (new,
-- expired, or lost to a restart without persistence), or that a client
-- which never seeds it (Redisson's RFencedLock) started again from 1,
-- starts from the server's clock in microseconds: every token drawn since
-- a counter's start is below the clock, so the new start is above every
-- token handed out before (1e15 µs is 2001).
-- A counter lives a day from its start, and again from every 256th token:
-- a lock that is no longer used leaves no key for long ("a lock per
-- order"), and the refresh costs one command in 256 draws, not one in
-- each. A counter that expires in use starts again, higher.
local function fence()
  local t = redis.call('incr', token)
  if t < 1e15 then
    t = micros()
    redis.call('set', token, t, 'PX', '86400000')
  elseif t % 256 == 0 then
    redis.call('pexpire', token, '86400000')
  end
  return t
end
-- mutex_take.lua: the mutex's fast path: a free lock that no turn was
-- given on is taken without a look at the queue (see mutex.lua), before
-- the queue's code is defined.
-- Reads the locals lock, token and grant (the lock hash, the fencing
-- counter and the grant key: see mutex_keys.lua) and owner and lease,
-- which the script defines before it.
-- Defines take_free().
-- uses fragment/fence.lua

-- take_free takes the lock for owner if it is free and no turn at it was
-- given, and returns the reply {1, token, holds}, for the script to
-- record if it records its requests; else it returns nil and whether the
-- lock is held.
local function take_free()
  if redis.call('exists', lock) == 1 then
    return nil, true
  end
  if redis.call('exists', grant) == 1 then
    return nil, false
  end
  local n = redis.call('hincrby', lock, owner, 1)
  redis.call('pexpire', lock, lease)
  return {1, fence(), n}
end
-- uses fragment/mutex_take.lua
local taken, held = take_free()
if taken then
  return taken
end
if not held then
  return {0, redis.call('pttl', grant)} -- a turn given to a waiter
end
local n = redis.call('hget', lock, owner)
if n then
  redis.call('pexpire', lock, lease)
  return {1, tonumber(redis.call('get', token)) or fence(), tonumber(n)}
end
return {0, redis.call('pttl', lock)}
