-- fence.lua: a lock's fencing token: the mutex's (RFencedLock's counter),
-- a fair lock's or a write lock's (latchkey's own counters).
-- Reads the local token (the counter's key), which the script, or the
-- fragment that names its KEYS (mutex_keys.lua, fair_state.lua), defines
-- before it.
-- Defines fence() and fenced(t).
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
-- fenced is fence given the counter's answer t to INCR: a fast path that
-- drew it itself needs this only when t < 1e15 or t % 256 == 0.
local function fenced(t)
  if t < 1e15 then
    t = micros()
    redis.call('set', token, t, 'PX', '86400000')
  elseif t % 256 == 0 then
    redis.call('pexpire', token, '86400000')
  end
  return t
end

local function fence()
  return fenced(redis.call('incr', token))
end
